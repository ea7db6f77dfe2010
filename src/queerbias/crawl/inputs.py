"""Small files the user names on the command line (token, feed list, deny-list, opt-out list).

`open()` on a FIFO or a device blocks or never ends, so a path is checked to be a regular
file before it is opened; the text must be UTF-8. Either problem is one clear line.
"""

from __future__ import annotations

import stat
from pathlib import Path

from queerbias.errors import DataError


def read_small_text(path: Path, what: str) -> str:
    """The UTF-8 text of the regular file `path`; DataError naming `what` otherwise."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except OSError as err:
        raise DataError(path, f"cannot read {what}: {err.strerror}") from None
    if not stat.S_ISREG(mode):
        raise DataError(path, f"{what} is not a regular file (a FIFO, device or folder); give a file")
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as err:
        raise DataError(path, f"cannot read {what}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise DataError(path, f"{what} is not UTF-8 text") from None
