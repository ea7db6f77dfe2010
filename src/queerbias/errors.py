"""User-facing errors: the CLI prints these as one line, without a traceback."""

from __future__ import annotations

import signal


class QueerbiasError(Exception):
    """Something the user can fix (bad input, missing data, offline, ...); the CLI exits with `status`."""

    status = 2


class DataError(QueerbiasError):
    """Bad input data; names the file, row (1-based, as an editor shows it) and field."""

    def __init__(self, path, message: str, row: int | None = None, field: str | None = None):
        self.path, self.row, self.field, self.message = str(path), row, field, message
        where = self.path
        if row is not None:
            where += f", row {row}"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {message}")


class Interrupted(QueerbiasError):
    """A signal (SIGTERM, SIGINT) ended the work after what it started was ended and recorded; the
    status is the shell's for that signal (128 + its number)."""

    def __init__(self, signal_number: int):
        self.status = 128 + signal_number
        super().__init__(f"interrupted by {signal.Signals(signal_number).name}: the running work was ended and "
                         "recorded as interrupted; run the same command again to resume")
