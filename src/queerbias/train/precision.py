"""Which training precision a run uses: `auto` picks what is fast where the run executes.

bf16 autocast is fast only where the hardware computes in bf16. A CUDA GPU with bf16
support does. A CPU does only with bf16 instructions (AVX512-BF16 or AMX); without them
torch falls back to slow reference kernels in the backward pass. Profiled on a 2-core
AVX2 machine under load, one demo step took over 30 minutes in bf16 against about 30 s
in fp32 (issue 20). With the instructions, bf16 is the faster choice, also beside a
CPU-bound process (BENCHMARKS.md, "Training precision"). So `auto` reads the CPU's flags
instead of assuming: bf16 on a CPU that has bf16 instructions and on a GPU that supports
it, fp32 everywhere else. An explicit `precision: bf16` on a CPU without bf16 instructions
still runs as asked, with a warning saying why it may crawl.
"""

from __future__ import annotations

import logging
from functools import cache
from pathlib import Path

import torch

log = logging.getLogger(__name__)

#: /proc/cpuinfo flags of native bf16 arithmetic
BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")


@cache
def cpu_has_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool | None:
    """Whether this CPU has bf16 instructions (None: its flags cannot be read)."""
    try:
        text = cpuinfo.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    flags = {flag for line in text.splitlines() if line.startswith("flags") for flag in line.split()}
    return bool(flags & set(BF16_CPU_FLAGS))


def resolve_precision(requested: str) -> str:
    """fp32, bf16 or fp16 for this run: `auto` is bf16 on a bf16-capable CUDA GPU or a CPU
    with bf16 instructions, else fp32."""
    on_gpu = torch.cuda.is_available()
    if requested == "auto":
        native = torch.cuda.is_bf16_supported() if on_gpu else cpu_has_bf16()
        return "bf16" if native else "fp32"
    if requested == "bf16" and not on_gpu and not cpu_has_bf16():
        log.warning("precision bf16 on a CPU without bf16 instructions (%s): torch emulates bf16 "
                    "there and training can be many times slower than fp32; use precision auto or fp32",
                    "/".join(BF16_CPU_FLAGS))
    return requested
