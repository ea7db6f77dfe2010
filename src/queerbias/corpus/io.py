"""Corpus-specific input policy: what happens to records that cannot be used."""

from __future__ import annotations

from queerbias.errors import DataError


class BadRecords:
    """Policy for unusable records: raise (default) or, under --skip-bad, skip and count."""

    def __init__(self, skip: bool = False, keep: int = 5):
        self.skip, self.keep = skip, keep
        self.count = 0
        self.examples: list[str] = []

    def handle(self, error: DataError) -> None:
        if not self.skip:
            raise error
        self.count += 1
        if len(self.examples) < self.keep:
            self.examples.append(str(error))
