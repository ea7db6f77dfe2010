"""The process group under `accelerate launch` (or a single process without it).

Accelerate only forms a CPU process group (gloo) when asked for the CPU
explicitly, so without an accelerator we ask for it; a bare `PartialState()` on
a machine without GPUs would leave every launched process believing it is alone.
"""

from __future__ import annotations

import torch
from accelerate import PartialState


def process_state() -> PartialState:
    return PartialState(cpu=not torch.accelerator.is_available())
