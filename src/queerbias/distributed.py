"""The process group under `accelerate launch` (or a single process without it).

Accelerate only forms a CPU process group (gloo) when asked for the CPU
explicitly, so without an accelerator we ask for it; a bare `PartialState()` on
a machine without GPUs would leave every launched process believing it is alone.
The launcher's environment (`WORLD_SIZE=two`) is checked first: accelerate reads it
with `int()`, whose ValueError would be a traceback.
"""

from __future__ import annotations

import os

import torch
from accelerate import PartialState

from queerbias.errors import QueerbiasError
from queerbias.options import MAX_INTEGER, integer

#: the numbers a launcher (accelerate, torchrun, Slurm through them) passes in the environment
LAUNCH_VARIABLES = ("WORLD_SIZE", "LOCAL_WORLD_SIZE", "RANK", "LOCAL_RANK", "NODE_RANK")


def process_state() -> PartialState:
    for name in LAUNCH_VARIABLES:
        launch_number(name)
    return PartialState(cpu=not torch.accelerator.is_available())


def launch_number(name: str, default: int = 0) -> int:
    """The whole number a launcher put into the environment variable `name` (`default` where unset)."""
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        value = integer(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_INTEGER:
        raise QueerbiasError(f"the environment variable {name} is {text[:40]!r}, not a whole number of processes or "
                             "a process index; it is set by the launcher (accelerate launch, torchrun): unset it or "
                             "launch again")
    return value
