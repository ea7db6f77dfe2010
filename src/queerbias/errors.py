"""User-facing errors: the CLI prints these as one line, without a traceback."""

from __future__ import annotations


class QueerbiasError(Exception):
    """Something the user can fix (bad input, missing data, offline, ...)."""


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
