"""The removal list of a crawl store or a built corpus: removed posts and authors stay removed.

Every removal is recorded here before the post leaves posts.jsonl: a post deleted at its
origin, an author who opted out or a post that no longer qualifies (both seen at refresh),
a person taken out with `corpus forget`. Entries are keyed pseudonyms, as in posts.jsonl:
the post's (of its ActivityPub uri, which every instance showing a federated copy shows
unchanged) and the author's (of `user@domain`). Every crawl, refresh and `corpus build`
consults the list, so no copy from any instance brings a removed post or person back.

The list has a file of its own beside the store, so a lost or rebuilt state.json never
loses it. It is sealed with the crawl key (AES-GCM, like the re-identification data):
without the key nobody learns which posts or people were removed, and a list that was
edited or damaged no longer opens. Each list has a random id of its own, which the seal
covers, and the folder's state and stats record that id and how many entries the list
holds: a list that went missing, was swapped for an older, shorter copy, or was copied
from another store or corpus is refused.

A takedown also lists, for every post it removes, the pseudonyms of the post's addresses (its
uri and its web address) with the author's pseudonym: a rerun of `corpus forget --url` finds
the person by a link to a post that is no longer stored (the first run was killed after it
emptied the store). These entries are not counted: they remove nothing by themselves.

Stores and corpora of older queerbias versions kept only the people who asked to be
forgotten, unsealed, in forgotten.json; `load` folds that file in and `save` replaces it.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from queerbias import killpoint
from queerbias.crawl.folder import PRIVATE_FILE
from queerbias.crawl.keys import CrawlKey
from queerbias.errors import DataError, QueerbiasError
from queerbias.fileio import atomic_write

TOMBSTONES = "tombstones.json"
LEGACY_FORGOTTEN = "forgotten.json"
FORGOTTEN = "forgotten"  # the reason recorded for `corpus forget`
_KIND, _LEGACY_KIND, _VERSION = "queerbias-tombstones", "queerbias-forgotten", 2
_V1_SEAL_LABEL = "tombstones"  # version 1 lists were sealed to this constant; re-sealed to their own id on save


def _seal_label(list_id: str) -> str:
    """What a list's seal is bound to: its own id, so no re-identification blob, and no other folder's list,
    passes for it."""
    return f"tombstones:{list_id}"


class Tombstones:
    """Removed post pseudonyms and removed account pseudonyms of one folder, each with its reason."""

    def __init__(self, folder: Path, key: CrawlKey, posts: dict[str, str] | None = None,
                 accounts: dict[str, str] | None = None, legacy: bool = False, list_id: str | None = None,
                 addresses: dict[str, str] | None = None):
        self.folder, self.key = Path(folder), key
        self.posts, self.accounts = dict(posts or {}), dict(accounts or {})
        self.addresses = dict(addresses or {})  # pseudonym of a removed post's address -> its author's pseudonym
        self._legacy = legacy  # forgotten.json (or a version 1 list) still to be replaced by the sealed list
        self.list_id = list_id or secrets.token_hex(8)

    @property
    def path(self) -> Path:
        return self.folder / TOMBSTONES

    @property
    def saved(self) -> bool:
        """Whether the list is on disk as it is (not missing, no forgotten.json left to replace)."""
        return self.path.exists() and not self._legacy

    @staticmethod
    def present(folder: Path) -> bool:
        """Whether `folder` holds a removal list (or the forgotten.json of an older queerbias)."""
        return (Path(folder) / TOMBSTONES).exists() or (Path(folder) / LEGACY_FORGOTTEN).exists()

    @classmethod
    def load(cls, folder: Path, key: CrawlKey, *, expected: dict | None = None, list_id: str | None = None,
             required: bool = False, recovery: str = "") -> Tombstones:
        """The list in `folder`. Missing, it is empty, unless `required` or `expected` (the counts the
        folder's records hold) says it should hold entries; then, like an unreadable list, one with fewer
        entries than `expected`, or one whose id is not the `list_id` the folder recorded (a list copied from
        elsewhere), it is a one-line refusal, ending with `recovery` (how to go on without a backup)."""
        folder = Path(folder)
        path = folder / TOMBSTONES
        if path.exists():
            tombstones = cls._read(folder, key)
        elif required or any(int(count or 0) for count in (expected or {}).values()):
            raise DataError(path, "missing: this folder's list of removed posts and authors cannot be read, so removals "
                                  "could come back; restore it from a backup" + recovery)
        else:
            tombstones = cls(folder, key, list_id=list_id)
        if list_id and tombstones.list_id != list_id and path.exists():
            raise DataError(path, "is not this folder's list of removed posts and authors (it was copied from "
                                  "another store or corpus); restore this folder's own list from a backup" + recovery)
        tombstones._fold_in_legacy()
        have = tombstones.counts()
        for kind, count in (expected or {}).items():
            if have.get(kind, 0) < int(count or 0):
                raise DataError(path, f"holds {have.get(kind, 0)} removed {kind} but the folder's records say "
                                      f"{count}: it was replaced by an older copy; restore it from a backup, or "
                                      "removals come back" + recovery)
        return tombstones

    @classmethod
    def _read(cls, folder: Path, key: CrawlKey) -> Tombstones:
        path = Path(folder) / TOMBSTONES
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("kind") != _KIND or data.get("version") not in (1, _VERSION):
                raise ValueError(f"not a list of removed posts and authors of version {_VERSION}")
            key.require_fingerprint(data.get("key_fingerprint"), path)
            list_id = str(data["list"]) if data.get("version") == _VERSION else None
            content = key.unseal(_seal_label(list_id) if list_id else _V1_SEAL_LABEL, str(data["sealed"]))
            posts, accounts, addresses = content["posts"], content["accounts"], content.get("addresses", {})
            if not all(isinstance(entries, dict) for entries in (posts, accounts, addresses)):
                raise ValueError("posts, accounts and addresses are not mappings")
        except QueerbiasError as err:
            raise DataError(path, str(err)) from None
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise DataError(path, f"unreadable ({err}); restore it from a backup: it keeps removed posts and "
                                  "people out of the corpus") from None
        return cls(folder, key, {str(p): str(r) for p, r in posts.items()},
                   {str(a): str(r) for a, r in accounts.items()}, legacy=list_id is None, list_id=list_id,
                   addresses={str(p): str(a) for p, a in addresses.items()})

    def _fold_in_legacy(self) -> None:
        path = self.folder / LEGACY_FORGOTTEN
        if not path.exists():
            return
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("kind") != _LEGACY_KIND:
                raise ValueError("not a list of forgotten accounts")
            self.key.require_fingerprint(data.get("key_fingerprint"), path)
            accounts = [str(a) for a in data["accounts"]]
        except QueerbiasError as err:
            raise DataError(path, str(err)) from None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
            raise DataError(path, f"unreadable ({err}); restore it from a backup: it keeps people who asked to "
                                  "be forgotten out of the corpus") from None
        for account in accounts:
            self.accounts.setdefault(account, FORGOTTEN)
        self._legacy = True

    def counts(self) -> dict[str, int]:
        return {"posts": len(self.posts), "accounts": len(self.accounts)}

    def record(self) -> dict:
        """What a folder's records keep of its list: the id and the counts, never an entry."""
        return {"list": self.list_id, **self.counts()}

    def covers(self, post: str | None, account: str | None) -> str | None:
        """Why the post `post` by `account` (pseudonyms) was removed, or None if it was not."""
        return self.posts.get(post or "") or self.accounts.get(account or "")

    def add(self, posts: dict[str, str] | None = None, accounts: dict[str, str] | None = None,
            addresses: dict[str, str] | None = None) -> bool:
        """Record removals (pseudonym -> reason; the first reason stays) and the addresses of removed posts
        (pseudonym -> author's pseudonym), and save; False when nothing was new."""
        new_posts = {p: r for p, r in (posts or {}).items() if p not in self.posts}
        new_accounts = {a: r for a, r in (accounts or {}).items() if a not in self.accounts}
        new_addresses = {p: a for p, a in (addresses or {}).items() if p not in self.addresses}
        if not new_posts and not new_accounts and not new_addresses:
            return False
        self.posts.update(new_posts)
        self.accounts.update(new_accounts)
        self.addresses.update(new_addresses)
        self.save()
        return True

    def save(self) -> None:
        """Write the sealed list atomically (0600), then drop a folded-in forgotten.json."""
        sealed = self.key.seal(_seal_label(self.list_id), {"posts": self.posts, "accounts": self.accounts,
                                                           "addresses": self.addresses})
        atomic_write(self.path, json.dumps({"kind": _KIND, "version": _VERSION, "key_fingerprint": self.key.fingerprint,
                                            "list": self.list_id, "sealed": sealed}, indent=1) + "\n",
                     permissions=PRIVATE_FILE)
        killpoint.reached("removal")
        if self._legacy:
            (self.folder / LEGACY_FORGOTTEN).unlink(missing_ok=True)
            self._legacy = False
