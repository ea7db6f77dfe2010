"""Entry scripts under `accelerate launch` (train/finetune.py, eval/*.py): a refusal is one line.

A refusal (bad config, bad input, diverged run) must be one line under the launcher too,
but both of accelerate's launchers add a traceback of their own to any failed child:
- one process: accelerate's simple launcher raises `CalledProcessError` (accelerate 1.x,
  `commands/launch.py: simple_launcher`; only its `--quiet` flag avoids it);
- several processes on one machine: torch elastic's agent, running inside
  `accelerate launch`, raises `ChildFailedError` with a failure summary, and every
  process would print the same line.
So after a refusal `run` ends the launcher that waits for it: the shell still sees
the failure (status 143 "Terminated" for one process, 137 "Killed" for several), without
a traceback. Since accelerate 1.16 the simple launcher reads the child's stderr through a pipe
and copies it to its own; a line in that pipe when the launcher's SIGTERM handler fires can be
read and then dropped (the launch ended with an empty stderr in 2 runs of 12). So the child
ends the launcher first, and writes its line only once the launcher, now draining the pipe
until the child exits, signals it back (`_end_simple_launch`). With several processes, local
rank 0 prints the line and ends the agent and the other workers; another rank holds its copy of the line back (`main`'s `report`) and
prints it only if rank 0 did not end it within a few seconds (when it alone refused, torch
reports as usual).
Several machines keep torch's own report. Without a launcher, `run` is `queerbias COMMAND`.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

from queerbias.cli import exit_after, main

#: how long a rank other than 0 waits, after refusing, for rank 0 to end the launch
SIBLING_GRACE_S = 5.0


def _parent_argv() -> list[bytes]:
    try:
        return Path(f"/proc/{os.getppid()}/cmdline").read_bytes().split(b"\0")
    except OSError:  # not Linux
        return []


def _accelerate_simple_launcher() -> bool:
    """Whether the parent process is `accelerate launch` running this script alone."""
    if "LOCAL_RANK" in os.environ or "ACCELERATE_MIXED_PRECISION" not in os.environ:
        return False
    argv = _parent_argv()
    return len(argv) > 2 and any(a.endswith(b"/accelerate") for a in argv[:2]) and b"launch" in argv


def _single_machine_elastic_worker() -> bool:
    """Whether this is one of several workers of torch elastic's agent, all on this machine."""
    env = os.environ
    return ("TORCHELASTIC_RUN_ID" in env and "LOCAL_RANK" in env
            and env.get("LOCAL_WORLD_SIZE", "1") == env.get("WORLD_SIZE", "0") != "1"
            and bool(_parent_argv()))


def _siblings() -> list[int]:
    """The other workers: the agent's children but this process."""
    agent, pids = os.getppid(), []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process has gone
            continue
        pid = int(stat.parent.name)
        if int(fields[1]) == agent and pid != os.getpid():
            pids.append(pid)
    return pids


def _end_launch() -> None:
    """Local rank 0, after its refusal line: end the agent, then the other workers."""
    sys.stderr.flush()
    siblings = _siblings()  # before the agent goes: then they are no longer its children
    os.kill(os.getppid(), signal.SIGKILL)  # SIGTERM would make the agent print a traceback
    for pid in siblings:
        os.kill(pid, signal.SIGTERM)


def _shares_stderr_with_parent() -> bool:
    """Whether this process writes into the launcher's own stderr (accelerate before 1.16) rather
    than into a pipe the launcher copies from."""
    try:
        mine, theirs = os.fstat(2), os.stat(f"/proc/{os.getppid()}/fd/2")
    except OSError:
        return True
    return (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino)


def _end_simple_launch(lines: list[str], wait_s: float = 10.0) -> None:
    """The only process under accelerate's simple launcher, after its refusal: end the launcher
    (SIGTERM: status 143, no traceback) so that `lines` reach its stderr. Where the launcher copies
    this process's stderr from a pipe, its SIGTERM handler starts a thread that copies the pipe to
    the end and then terminates this process; that SIGTERM (caught here, so it only says the
    copier runs) is the cue to write. It is caught with a handler, which holds for every thread
    (a refusal during training has several, and a signal mask is one thread's), and watched for
    in short sleeps: the handler runs in the main thread only between them when another thread
    took the signal. Without the cue within `wait_s`, the lines are written anyway."""
    text = "".join(line + "\n" for line in lines)
    if _shares_stderr_with_parent():
        sys.stderr.write(text)
        sys.stderr.flush()
        os.kill(os.getppid(), signal.SIGTERM)
        return
    cued = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: cued.set())
    os.kill(os.getppid(), signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while not cued.is_set() and time.monotonic() < deadline:
        time.sleep(0.02)
    sys.stderr.write(text)
    sys.stderr.flush()


def run(*command: str) -> None:
    """`queerbias COMMAND ARGS` with the script's arguments, ending as described above; exits."""
    several = _single_machine_elastic_worker()
    simple = not several and _accelerate_simple_launcher()
    first = not several or os.environ["LOCAL_RANK"] == "0"
    # the refusal line held back: another rank's (shown only if rank 0 does not end the launch),
    # or the simple launcher's child's (shown once the launcher reads it to the end)
    held: list[str] = []
    try:
        status = main([*command, *sys.argv[1:]], report=held.append if simple or not first else None)
    except SystemExit as exit_:  # --help
        status = exit_.code
    if status == 2 and several and first:
        _end_launch()
    elif status == 2 and several:
        time.sleep(SIBLING_GRACE_S)  # rank 0 ends this process here if it refused too
    elif status == 2 and simple:
        _end_simple_launch(held)
        held = []
    for line in held:
        print(line, file=sys.stderr)
    exit_after(status)  # after a refusal at once, without seconds of the interpreter's teardown
