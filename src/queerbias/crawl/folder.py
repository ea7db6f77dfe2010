"""An output folder that holds personal data: private to its owner, and written by one process at a time.

Crawled posts and corpora built from them are special-category data, so folders are
created 0700 and files 0600 whatever the umask. Two processes appending to one folder
interleave and overwrite each other's state; an exclusive `flock` on `.lock` refuses the
second one with a clear message. The lock is released by the kernel when the process
ends, however it ends, so a killed crawl never leaves a stale lock behind.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import BinaryIO

from queerbias.errors import QueerbiasError
from queerbias.outputs import lock_file

log = logging.getLogger(__name__)
PRIVATE_DIR, PRIVATE_FILE = 0o700, 0o600
LOCK = ".lock"


def make_private_dir(path: Path) -> Path:
    """Create `path` (and parents) if needed and make it 0700 when it is ours."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise QueerbiasError(f"{path} is not a folder")
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    if path.stat().st_uid == os.getuid():
        os.chmod(path, PRIVATE_DIR)
    return path


def open_private_append(path: Path) -> BinaryIO:
    """`path` opened for appending bytes, unbuffered (nothing half-written waits in a buffer to be flushed
    later), created 0600 (and made 0600 if it existed)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
    os.fchmod(fd, PRIVATE_FILE)
    return os.fdopen(fd, "ab", buffering=0)


def write_all(handle: BinaryIO, data: bytes) -> None:
    """Write all of `data` to an unbuffered file, or raise OSError (a raw write may stop short)."""
    view = memoryview(data)
    while view:
        written = handle.write(view)
        if not written:
            raise OSError("no space left to write")
        view = view[written:]


class FolderLock:
    """Exclusive lock on a folder for the lifetime of this object (or until `release`). Crawl, refresh,
    forget and corpus build all take it; a second one is refused, or with `wait` (a build about to replace
    its outputs) waits its turn."""

    def __init__(self, folder: Path, purpose: str, wait: bool = False):
        self.folder = Path(folder)
        busy = (f"{self.folder} is in use by another queerbias process (a crawl, refresh, forget or corpus "
                f"build); wait for it to finish, then {purpose} again")
        try:
            self._fd: int | None = lock_file(self.folder / LOCK, PRIVATE_FILE, busy)
        except QueerbiasError:
            if not wait:
                raise
            log.warning("%s is in use by another queerbias process; waiting for it to finish", self.folder)
            self._fd = lock_file(self.folder / LOCK, PRIVATE_FILE, busy, wait=True)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the last descriptor drops the flock
            self._fd = None
