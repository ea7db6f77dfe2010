"""The people who asked to be forgotten, kept in a file of their own in each store.

`corpus forget` removes a person's posts; this list is what keeps them removed. It
lives outside state.json on purpose: a state that is deleted, rebuilt or restored from
a backup must never bring the person back, and every later crawl, refresh and corpus
build reads this file and drops their posts on sight. It holds keyed account
pseudonyms only, with the fingerprint of the key they were made with.
"""

from __future__ import annotations

import json
from pathlib import Path

from queerbias.crawl.folder import PRIVATE_FILE
from queerbias.errors import DataError
from queerbias.fileio import atomic_write

FORGOTTEN = "forgotten.json"
_KIND = "queerbias-forgotten"


class Forgotten:
    """The forgotten account pseudonyms of one folder."""

    def __init__(self, folder: Path, accounts: frozenset[str] = frozenset(), key_fingerprint: str | None = None):
        self.path = Path(folder) / FORGOTTEN
        self.accounts, self.key_fingerprint = accounts, key_fingerprint

    @classmethod
    def load(cls, folder: Path) -> Forgotten:
        path = Path(folder) / FORGOTTEN
        if not path.exists():
            return cls(folder)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("kind") != _KIND:
                raise ValueError("not a list of forgotten accounts")
            accounts = frozenset(str(a) for a in data["accounts"])
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise DataError(path, f"unreadable ({err}); restore it from a backup: it keeps people "
                                  "who asked to be forgotten out of the corpus") from None
        return cls(folder, accounts, data.get("key_fingerprint"))

    def add(self, accounts: set[str], key_fingerprint: str) -> bool:
        """Record `accounts` (written before any post is removed); False when all were already there."""
        new = self.accounts | accounts
        if new == self.accounts:
            return False
        self.accounts, self.key_fingerprint = frozenset(new), key_fingerprint
        atomic_write(self.path, json.dumps({"kind": _KIND, "key_fingerprint": key_fingerprint,
                                            "accounts": sorted(new)}, indent=1) + "\n", permissions=PRIVATE_FILE)
        return True
