"""Small files the user names on the command line (token, feed list, deny-list, opt-out list).

They are read by the shared `fileio.read_text_utf8`: a regular file (checked before
`open()`, which blocks on a FIFO) holding UTF-8 text, or one clear line saying why not.
"""

from __future__ import annotations

from pathlib import Path

from queerbias.fileio import read_text_utf8


def read_small_text(path: Path, what: str) -> str:
    """The UTF-8 text of the regular file `path`; DataError naming `what` otherwise."""
    return read_text_utf8(path, what)
