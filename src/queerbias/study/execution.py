"""Running a study's cells on this machine: each as its own process, N side by side.

A cell is `queerbias train --config STUDY/.../study-cell.yaml` in a subprocess (under
`accelerate launch` when the study names an accelerate config), so a crash, a refusal or
an out-of-memory kill stays in its cell: the cell is reported with its log's last line
and the other cells go on. A finished cell (its model card written) is skipped; an
unfinished one resumes from its last complete checkpoint (the training runner's own
resume). Every launch appends to the cell's log and records one line in its launches
file: start, seconds, exit status, the commit and package versions that ran it.

`jobs` cells run at once and share the machine: each gets cores // jobs threads
(OMP_NUM_THREADS, MKL_NUM_THREADS; a config's own `threads` still wins) and, where GPUs
are visible, its own share of them (CUDA_VISIBLE_DEVICES). A cell holds a lock on its
folder for as long as its process lives, so two studies never train the same cell.

A cell is finished only once a launch ended with status 0 beside a finished training run:
the study then writes the cell's own mark (`Cell.mark_finished`). SIGTERM or SIGINT (a job's
end, Ctrl-C) to the study ends its training processes first (SIGTERM to each: accelerate's
launchers end their workers on it), records their launches as interrupted, starts no further
cell and ends the study with `Interrupted` (status 128 + the signal). The training stays in
the study's process group, so a kill of the group (a job's end) takes both, as before.
"""

from __future__ import annotations

import fcntl
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from queerbias.errors import Interrupted, QueerbiasError
from queerbias.study.cells import LOCK_FILE, Cell, launch_command
from queerbias.suites.provenance import package_versions
from queerbias.train.checkpoints import is_finished

#: test hook: launch only the first N unfinished cells, then end the study as a kill would (SIGKILL)
STOP_AFTER = "QUEERBIAS_STUDY_STOP_AFTER"
TAIL_BYTES = 65536


@dataclass(frozen=True)
class Outcome:
    cell: Cell
    #: finished (now), skipped (finished before), failed, busy (another process runs it), interrupted (the
    #: study ended it on SIGTERM or SIGINT), not run
    status: str
    returncode: int | None = None
    last_line: str = ""
    seconds: float = 0.0


class Launched:
    """The training processes a study runs now, ended together when the study gets SIGTERM or SIGINT.

    `with Launched() as launched:` installs the handlers (in the main thread; elsewhere a signal
    ends the process as usual) and, on leaving, raises `Interrupted` if a signal came.
    """

    def __init__(self):
        self.signal: int | None = None
        self._lock = threading.RLock()  # the handler runs in the main thread, which may hold it
        self._running: set[subprocess.Popen] = set()
        self._previous: dict[int, object] = {}

    def __enter__(self) -> Launched:
        if threading.current_thread() is threading.main_thread():
            for number in (signal.SIGTERM, signal.SIGINT):
                self._previous[number] = signal.signal(number, self._end_all)
        return self

    def __exit__(self, *exc) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        if self.signal is not None and exc[0] is None:
            raise Interrupted(self.signal)

    def run(self, argv: list[str], **options) -> int | None:
        """`argv`'s exit status; None when the study is ending (nothing started)."""
        with self._lock:
            if self.signal is not None:
                return None
            process = subprocess.Popen(argv, **options)
            self._running.add(process)
        try:
            return process.wait()
        finally:
            with self._lock:
                self._running.discard(process)

    def _end_all(self, number: int, frame) -> None:
        with self._lock:
            self.signal = number
            for process in self._running:
                process.terminate()  # SIGTERM; a process that has ended already is left alone


def run_cells(cells: list[Cell], jobs: int = 1, accelerate_config: str | None = None, say=print) -> list[Outcome]:
    """Run every unfinished cell; returns one outcome per cell, in plan order (`Interrupted` after SIGTERM or
    SIGINT, once the running cells have ended)."""
    environments = slot_environments(jobs)
    skipped = {cell: Outcome(cell, "skipped") for cell in cells if cell.finished()}
    todo = [cell for cell in cells if cell not in skipped]
    stop_after = os.environ.get(STOP_AFTER)
    if stop_after is not None:
        todo = todo[:int(stop_after)]
    for cell in skipped:
        say(f"{cell.name}: finished earlier, skipped")
    provenance = launch_provenance()
    free: queue.Queue[int] = queue.Queue()
    for slot in range(jobs):
        free.put(slot)

    def work(cell: Cell) -> Outcome:
        slot = free.get()
        try:
            return run_cell(cell, launch_command(cell, accelerate_config), environments[slot], provenance,
                            launched=launched)
        finally:
            free.put(slot)

    outcomes = dict(skipped)
    with Launched() as launched, ThreadPoolExecutor(max_workers=jobs) as pool:
        for done, outcome in enumerate(pool.map(work, todo), start=1):
            outcomes[outcome.cell] = outcome
            say(f"[{done}/{len(todo)}] {describe(outcome)}")
    if stop_after is not None:
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    return [outcomes.get(cell, Outcome(cell, "not run")) for cell in cells]


def launch_provenance() -> dict:
    """What every launch records besides its times: the commit and package versions running it."""
    return {"commit": code_version(), "versions": package_versions()}


def run_cell(cell: Cell, argv: list[str], env: dict, provenance: dict, launcher: str = "queerbias study", *,
             launched: Launched) -> Outcome:
    """One launch of one cell: its log appended, the launch recorded as it starts and when it ends
    (a launch killed with the study keeps its start line: `Cell.launches`; one the study ended on
    SIGTERM or SIGINT is recorded interrupted), the outcome read back; a finished cell marked."""
    if launched.signal is not None:
        return Outcome(cell, "not run")
    cell.folder.mkdir(parents=True, exist_ok=True)
    with open(cell.folder / LOCK_FILE, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return Outcome(cell, "busy", last_line=f"another process is running {cell.folder}")
        cell.record_interrupted()
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        launch = f"{started} {os.getpid()} {uuid.uuid4().hex[:8]}"
        cell.record_launch({"launch": launch, "started": started, "launcher": launcher, **provenance,
                            "command": argv, "threads": env.get("OMP_NUM_THREADS"),
                            "gpus": env.get("CUDA_VISIBLE_DEVICES")})
        with open(cell.log_file, "ab") as sink:
            sink.write(f"== {launcher}, {started}: {shlex.join(argv)}\n".encode())
            sink.flush()
            clock = time.monotonic()
            # the lock travels with the child: it is held for as long as the training lives
            returncode = launched.run(argv, stdout=sink, stderr=subprocess.STDOUT, env=env, pass_fds=(lock.fileno(),))
            seconds = round(time.monotonic() - clock, 1)
        interrupted = launched.signal is not None
        cell.record_launch({"launch": launch, "seconds": seconds, "returncode": returncode,
                            **({"interrupted": True} if interrupted else {})})
        if returncode == 0 and is_finished(cell.folder):
            cell.mark_finished()
            return Outcome(cell, "finished", returncode, seconds=seconds)
    if interrupted:
        return Outcome(cell, "interrupted", returncode, seconds=seconds)
    return Outcome(cell, "failed", returncode, last_line(cell.log_file), seconds)


def describe(outcome: Outcome) -> str:
    if outcome.status == "finished":
        return f"{outcome.cell.name}: finished in {outcome.seconds:.0f} s"
    if outcome.status == "failed":
        return (f"{outcome.cell.name}: failed (exit status {outcome.returncode}): {outcome.last_line} "
                f"(log: {outcome.cell.log_file})")
    return f"{outcome.cell.name}: {outcome.status}" + (f" ({outcome.last_line})" if outcome.last_line else "")


def last_line(log: Path) -> str:
    """The last non-empty line of a log (progress bars rewrite lines with carriage returns)."""
    if not log.is_file():
        return ""
    with open(log, "rb") as handle:
        handle.seek(max(0, log.stat().st_size - TAIL_BYTES))
        tail = handle.read().decode("utf-8", errors="replace")
    lines = [line.strip() for line in tail.replace("\r", "\n").split("\n") if line.strip()]
    return lines[-1] if lines else ""


def slot_environments(jobs: int) -> list[dict]:
    """The environment of each of `jobs` side-by-side cells: a share of the cores and GPUs."""
    base = {**os.environ, "TOKENIZERS_PARALLELISM": "false"}
    if jobs == 1:
        return [base]
    threads = str(max(1, len(os.sched_getaffinity(0)) // jobs))
    gpus = visible_gpus()
    if gpus and jobs > len(gpus):
        raise QueerbiasError(f"--jobs {jobs}: {len(gpus)} GPU(s) visible, and each side-by-side cell needs its own; "
                             f"give at most --jobs {len(gpus)} (or hide them: CUDA_VISIBLE_DEVICES=)")
    share = len(gpus) // jobs
    return [{**base, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads,
             **({"CUDA_VISIBLE_DEVICES": ",".join(gpus[slot * share:(slot + 1) * share])} if gpus else {})}
            for slot in range(jobs)]


def visible_gpus() -> list[str]:
    """CUDA devices the cells may use: CUDA_VISIBLE_DEVICES where set, else all torch sees."""
    if "CUDA_VISIBLE_DEVICES" in os.environ:
        return [d.strip() for d in os.environ["CUDA_VISIBLE_DEVICES"].split(",") if d.strip() and d.strip() != "-1"]
    import torch  # only to count the devices

    return [str(index) for index in range(torch.cuda.device_count())]


def code_version() -> str | None:
    """`git describe --always --dirty` of the queerbias checkout running this, None for an installed
    package (the cells' summaries record its version)."""
    source = Path(__file__).resolve().parents[1]
    try:
        top = subprocess.run(["git", "-C", str(source), "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, check=True).stdout.strip()
        if (Path(top).resolve() / "src" / "queerbias") != source:
            return None  # the package sits inside some other repository
        return subprocess.run(["git", "-C", top, "describe", "--always", "--dirty"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
