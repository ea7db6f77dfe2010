"""Deterministic kill points, so that tests of resuming never race a clock.

A test that kills a run to check that it resumes must kill it at a known point: waiting
for N lines of progress with a deadline fails on a loaded machine. With
`QUEERBIAS_KILL_AFTER=POINT:N` in the environment the process sends itself SIGKILL (no
cleanup, as a real kill) the N-th time it reaches `POINT`: `chunk` (a progress chunk of
a run is fsynced), `checkpoint` (a training checkpoint is marked complete), `document` (a
document is written to a corpus split's temporary file), `sources-read` (a corpus build has
read all its sources), `renamed` (a build's split files are in place, before stats.json),
`removal` (a removal list, or a file a takedown rewrites, is written). `POINT:N:group` kills
the process's whole process group instead, as ending a job kills a study together with the
training it launched. Unset, as always outside tests, `reached` is one dictionary lookup.

A test that must run something at exactly such a point (a takedown while a build reads)
sets `QUEERBIAS_PAUSE_AT=POINT:N:FIFO`: the N-th time the process reaches `POINT` it opens
the named pipe `FIFO` for reading, which blocks until the test opens it for writing, and
goes on when the test closes it. No clock is involved either way.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

ENV, PAUSE_ENV = "QUEERBIAS_KILL_AFTER", "QUEERBIAS_PAUSE_AT"
_reached: Counter[str] = Counter()
_paused: Counter[str] = Counter()


def reached(point: str) -> None:
    """Count a pass through `point`; die or pause there when the environment asks for it."""
    if os.environ.get(PAUSE_ENV):
        _pause(point, os.environ[PAUSE_ENV])
    spec = os.environ.get(ENV)
    if not spec:
        return
    name, _, rest = spec.partition(":")
    if name != point:
        return
    times, _, scope = rest.partition(":")
    _reached[point] += 1
    if _reached[point] >= int(times or 1):
        if scope == "group":
            os.killpg(os.getpgid(0), signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)


def _pause(point: str, spec: str) -> None:
    name, times, fifo = spec.split(":", 2)
    if name != point:
        return
    _paused[point] += 1
    if _paused[point] == int(times or 1):
        with open(fifo, "rb") as pipe:  # blocks until the test opens it for writing
            pipe.read()  # and returns when the test closes it
