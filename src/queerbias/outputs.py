"""The one guard for every path a command or API function writes to, and the lock on it.

Results must never replace what they were computed from: `score --pairs X/pairs.csv
--out X` would write the results over the pair file, `card RUN --out RUN/config.yaml`
the run's config, `corpus build -o X` with a source inside X would shrink the source.
`output_path` refuses an empty path, a path that cannot be written, and one that is,
contains or lies inside an input, before any work starts. `OutputLock` refuses a folder
that another running process writes to (two `score` runs into one --out would otherwise
both finish and the last one win); the kernel drops the lock however the holder ends.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterable
from pathlib import Path

from queerbias.errors import QueerbiasError
from queerbias.fileio import require_output_dir

LOCK_FILE = ".queerbias.lock"


def output_path(value: str | Path | None, inputs: Iterable[str | Path | None] = (), *, option: str = "--out",
                file: bool = False) -> Path:
    """`value` as a writable output (a folder, or a file when `file`), checked against every input.

    Inputs that are not paths on this machine (a registered benchmark name, a Hub id) are
    skipped; the others are compared after resolving symbolic links.
    """
    if value is None or not str(value).strip():
        raise QueerbiasError(f"{option} must name a {'file' if file else 'directory'} (an empty value would "
                             "write into the current one)")
    path = Path(value)
    require_output_dir(path.parent if file else path, option)
    if file and path.is_dir():
        raise QueerbiasError(f"{option} {path} is a directory; give the file to write")
    target = path.resolve()
    for given in inputs:
        if given is None or not str(given).strip() or not Path(given).exists():
            continue
        source = Path(given).resolve()
        if target == source:
            raise QueerbiasError(f"{option} {path} is the input {given}; writing there would destroy it")
        if source.is_relative_to(target):
            raise QueerbiasError(f"{option} {path} contains the input {given}; results written there could "
                                 "replace it; choose another folder")
        if source.is_dir() and target.is_relative_to(source):
            raise QueerbiasError(f"{option} {path} lies inside the input folder {given}; results written there "
                                 "would change the input; choose a folder outside it")
    return path


def run_files(run: str | Path, *, except_: Iterable[str | Path] = ()) -> list[Path]:
    """The files of a folder that a command reads and writes beside (a training run for `card`):
    each is an input, except the ones the command itself writes (`except_`)."""
    keep = {Path(p).resolve() for p in except_}
    root = Path(run)
    if not root.is_dir():
        return []
    return [p for p in root.rglob("*") if p.is_file() and p.resolve() not in keep]


def lock_file(path: Path, mode: int, busy: str, wait: bool = False) -> int:
    """An exclusive `flock` on `path` (created with `mode`), holding this process id; `busy` is
    the refusal when another process holds it (with `wait`, the process waits for it instead).
    Returns the descriptor: closing it unlocks.

    A lock file its holder removed on release is locked afresh: a process that found the
    file and locked it after the removal sees a different inode and tries again.
    """
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, mode)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except OSError as err:
            os.close(fd)
            if err.errno in (errno.EWOULDBLOCK, errno.EACCES):
                raise QueerbiasError(busy) from None
            raise
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


class OutputLock:
    """Exclusive lock on an output folder while this process writes it (`with OutputLock(dir, what):`).

    A folder it had to create is removed again when the block fails and left it empty (a
    refused run leaves nothing behind); the lock file is removed on release (`lock_file`
    makes that safe).
    """

    def __init__(self, folder: str | Path, what: str):
        self.folder, self.what = Path(folder), what
        self._fd: int | None = None

    def __enter__(self) -> OutputLock:
        self._created = not self.folder.exists()
        self.folder.mkdir(parents=True, exist_ok=True)
        self._fd = lock_file(self.folder / LOCK_FILE, 0o644,
                             f"{self.folder} is in use by another running queerbias process ({self.what} into the "
                             "same folder); wait for it to finish or choose another folder")
        return self

    def __exit__(self, kind, *exc) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.folder / LOCK_FILE)
        os.close(self._fd)
        self._fd = None
        if kind is not None and self._created:
            with contextlib.suppress(OSError):  # not empty: keep what is there
                self.folder.rmdir()
