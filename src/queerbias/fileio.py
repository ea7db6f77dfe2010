"""File I/O shared by every command: JSONL streaming and crash-safe writes.

Every output that a later step trusts (scores, summaries, documents, splits, crawl
state) is written to a temporary file in the same folder and moved into place with
`os.replace`, so a killed process leaves either the old file or the new one, never
half of one.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from queerbias.errors import DataError

_UMASK = os.umask(0)
os.umask(_UMASK)


def open_text(path: Path) -> IO[str]:
    """Open a UTF-8 text file for reading, transparently un-gzipping `*.gz`."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def iter_jsonl(path: Path, on_bad: Callable[[DataError], None] | None = None,
               ) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(row, record)` per non-blank line; row is 1-based like an editor's.

    A line that is not a JSON object raises DataError, or is passed to `on_bad`
    and skipped when that is given.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "file not found")
    with open_text(path) as handle:
        for row, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = _parse_object(line, path, row)
            except DataError as err:
                if on_bad is None:
                    raise
                on_bad(err)
                continue
            yield row, record


def _parse_object(line: str, path: Path, row: int) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as err:
        raise DataError(path, f"invalid JSON: {err.msg}", row=row) from None
    if not isinstance(record, dict):
        raise DataError(path, f"expected a JSON object, got {type(record).__name__}", row=row)
    return record


def dumps_line(record: dict[str, Any]) -> str:
    """One JSONL line; non-ASCII kept readable (German text)."""
    return json.dumps(record, ensure_ascii=False, sort_keys=False) + "\n"


@contextlib.contextmanager
def atomic_open(path: Path, mode: str = "w", permissions: int | None = None) -> Iterator[IO]:
    """Write `path` via a temp file that replaces it only if the block succeeds.

    The data and the rename are fsynced, so after a power cut the file is the old
    or the new one. `permissions` default to the usual umask-based ones (0600 for
    secrets such as a pseudonymisation salt).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.chmod(tmp, 0o666 & ~_UMASK if permissions is None else permissions)
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: str | bytes, permissions: int | None = None) -> None:
    """Replace `path` with `data` (text or bytes) atomically."""
    with atomic_open(path, "wb" if isinstance(data, bytes) else "w", permissions) as handle:
        handle.write(data)


def atomic_write_json(path: Path, data: Any) -> None:
    """Replace `path` with pretty-printed JSON atomically."""
    atomic_write(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")
