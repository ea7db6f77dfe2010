"""File I/O shared by every command: input checks, JSONL streaming and crash-safe writes.

Every output that a later step trusts (scores, summaries, documents, splits, crawl
state) is written to a temporary file in the same folder and moved into place with
`os.replace`, so a killed process leaves either the old file or the new one, never
half of one. JSON is written strictly (no NaN or Infinity, which are not JSON), and
every input file is checked to be a regular file before it is opened: `open()` on a
FIFO blocks forever.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import math
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from queerbias.errors import DataError, QueerbiasError
from queerbias.records import parse_json_object

_UMASK = os.umask(0)
os.umask(_UMASK)


def regular_file(path: str | Path, what: str = "file") -> Path:
    """`path` if it is an existing regular file (after symlinks); else a DataError saying why.

    Checked with `stat`, never `open`: opening a FIFO blocks until a writer appears,
    and a device file can be endless.
    """
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise DataError(path, f"cannot read {what}: no such file") from None
    except OSError as err:
        raise DataError(path, f"cannot read {what}: {err.strerror}") from None
    if not stat.S_ISREG(mode):
        kind = ("a folder" if stat.S_ISDIR(mode) else
                "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else
                "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else
                "a socket" if stat.S_ISSOCK(mode) else "something else")
        raise DataError(path, f"{what} is not a regular file but {kind}; give a file")
    return path


def existing_folder(path: str | Path, what: str) -> Path:
    """`path` if it is a folder; else a QueerbiasError that says whether nothing is there (a mistyped
    path) or something that is no folder, so a missing path is never reported as "not a directory"."""
    path = Path(path)
    if path.is_dir():
        return path
    if os.path.lexists(path):
        raise QueerbiasError(f"{path}: not a directory, so not a {what}")
    raise QueerbiasError(f"{path}: no such {what} (nothing is there)")


def decode_utf8(path: Path, raw: bytes) -> str:
    """`raw` as UTF-8 text (a BOM is dropped); otherwise a DataError naming the row and byte. A NUL
    byte is refused too, wherever it lies: no text file holds one, and a reader that checks only
    the rows it uses (a sample) would never see it."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        row = raw.count(b"\n", 0, err.start) + 1
        raise DataError(path, f"not UTF-8: bytes {raw[err.start:err.end]!r} at byte {err.start} "
                        "(Latin-1 or Windows-1252?); re-save the file as UTF-8", row=row) from None
    nul = raw.find(b"\0")
    if nul >= 0:
        raise DataError(path, f"a NUL byte at byte {nul}: not a text file (a binary file, or one cut and padded "
                              "by a crash)", row=raw.count(b"\n", 0, nul) + 1)
    return text


def read_text_utf8(path: str | Path, what: str = "file") -> str:
    """The text of a regular UTF-8 file, with the checks of `regular_file` and `decode_utf8`."""
    path = regular_file(path, what)
    try:
        raw = path.read_bytes()
    except OSError as err:  # e.g. no permission to read
        raise DataError(path, f"cannot read {what}: {err.strerror}") from None
    return decode_utf8(path, raw)


def require_output_dir(path: Path, option: str = "--out") -> Path:
    """Refuse an output folder that cannot be one (a file, or a folder we may not write
    in) before any model is loaded, rather than after minutes of work."""
    path = Path(path)
    existing = path
    while not existing.exists():
        if existing.is_symlink():
            raise QueerbiasError(f"{option} {path}: {existing} is a broken symbolic link")
        existing = existing.parent
    if not existing.is_dir():
        raise QueerbiasError(f"{option} {path}: {existing} is a file, not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise QueerbiasError(f"{option} {path}: no permission to write in {existing}")
    return path


def open_text(path: Path) -> IO[str]:
    """Open a UTF-8 text file for reading, transparently un-gzipping `*.gz`."""
    path = regular_file(path)
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def iter_jsonl(path: Path, on_bad: Callable[[DataError], None] | None = None,
               ) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(row, record)` per non-blank line; row is 1-based like an editor's.

    A line that is not a JSON object raises DataError, or is passed to `on_bad`
    and skipped when that is given.
    """
    with open_text(Path(path)) as handle:
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
    """Strict: a duplicate key or NaN/Infinity is refused (`records.parse_json_object`); values
    may be long (a corpus document), so no field bound."""
    return parse_json_object(line, path, row, max_field=None)


def cut_partial_line(path: Path) -> None:
    """Cut the last line of an append-only file where a kill left it half-written, so that the
    next appended line starts on a line of its own (and the file reads as whole lines)."""
    if not path.is_file():
        return
    with open(path, "r+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        if not size:
            return
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return
        block, end = 1 << 16, size
        while end > 0:  # back to the last newline, a block at a time
            start = max(0, end - block)
            handle.seek(start)
            found = handle.read(end - start).rfind(b"\n")
            if found >= 0:
                handle.truncate(start + found + 1)
                return
            end = start
        handle.truncate(0)


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


def dump_json_strict(data: Any, what: str = "result") -> str:
    """Pretty-printed JSON text (with a final newline) of a summary, delta or other result.

    NaN and Infinity are not JSON (RFC 8259): other tools reject them, and a NaN
    figure is a broken result, never a value to pass on. Refused, naming the key path
    of the first such number (`overall.soft_score`), so nothing is written.
    """
    try:
        return json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    except ValueError:
        raise QueerbiasError(f"{what}: {_non_finite_path(data) or '(a value)'} is not a finite "
                             "number (NaN or infinity); the result is broken and not written") from None


def _non_finite_path(value: Any, prefix: str = "") -> str | None:
    if isinstance(value, float) and not math.isfinite(value):
        return prefix or "(top)"
    items = (value.items() if isinstance(value, dict) else
             enumerate(value) if isinstance(value, (list, tuple)) else ())
    for key, item in items:
        found = _non_finite_path(item, f"{prefix}[{key}]" if isinstance(key, int) else
                                 f"{prefix}.{key}" if prefix else str(key))
        if found:
            return found
    return None
