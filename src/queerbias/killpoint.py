"""Deterministic kill points, so that tests of resuming never race a clock.

A test that kills a run to check that it resumes must kill it at a known point: waiting
for N lines of progress with a deadline fails on a loaded machine. With
`QUEERBIAS_KILL_AFTER=POINT:N` in the environment the process sends itself SIGKILL (no
cleanup, as a real kill) the N-th time it reaches `POINT`: `chunk` (a progress chunk of
a run is fsynced), `checkpoint` (a training checkpoint is marked complete), `document` (a
document is written to a corpus split's temporary file). Unset, as always outside tests,
`reached` is one dictionary lookup.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

ENV = "QUEERBIAS_KILL_AFTER"
_reached: Counter[str] = Counter()


def reached(point: str) -> None:
    """Count a pass through `point`; die there when the environment asks for it."""
    spec = os.environ.get(ENV)
    if not spec:
        return
    name, _, times = spec.partition(":")
    if name != point:
        return
    _reached[point] += 1
    if _reached[point] >= int(times or 1):
        os.kill(os.getpid(), signal.SIGKILL)
