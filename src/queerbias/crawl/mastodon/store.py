"""The crawl's output folder: a store of pseudonymous posts that cannot be wiped, torn or shared by accident.

Files (folder 0700, files 0600, all under an exclusive lock while a process works on them):

    posts.jsonl     the corpus records: keyed pseudonyms, text, no uri, url or handle
    reid.jsonl      per post, its re-identification data sealed with the crawl key
    state.json      cursors, statistics, the number of committed posts, the key's fingerprint
    stats.json      counts for people (no contacts, no handles)
    tombstones.json the sealed list of removed posts and authors (see `tombstones`)

Appending a page is a commit in three steps: the sealed lines are appended and fsynced,
then the posts, then state.json (with the new number of committed posts) is replaced
atomically. A write that fails half-way (disk full) is cut back at once and stops the
crawl; on the next start posts.jsonl is cut back to the committed posts, and any torn
tail to its last complete line, so nothing half-written is ever appended after.

Removing or replacing posts (refresh, takedown, the origin's copy winning, merging
sightings) rewrites posts.jsonl and then reid.jsonl atomically, with `rewriting` set in
the state so that a crash in between is recognised on the next start. A missing
state.json never truncates anything: the state is rebuilt from the posts (cursors
start afresh, and the key is checked against stats.json, the removal list or the sealed
data first). Lost bookkeeping never re-admits a removal: a store whose removal list and
both records of it (state.json, stats.json) are gone is refused, except by a takedown, which
cleans it and marks it (`recovery_needed`), until the user recovers it explicitly
(`recover`: `crawl mastodon --recover`). That holds whatever else survives: a store that a
takedown emptied has no posts left, so what shows that the folder was a store is any file a
store keeps from its first opening on (posts.jsonl and reid.jsonl, empty or not, and the
lock file), looked for before the lock is taken.

A post on the removal list, or by an author on it, is never stored again, whichever
instance shows it; every removal is put on the list before the post is taken out.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from queerbias import killpoint
from queerbias.crawl.folder import (
    LOCK,
    PRIVATE_FILE,
    FolderLock,
    make_private_dir,
    open_private_append,
    write_all,
)
from queerbias.crawl.keys import CrawlKey
from queerbias.crawl.mastodon.records import DOC_PREFIX, Post
from queerbias.crawl.mastodon.tombstones import FORGOTTEN, TOMBSTONES, Tombstones
from queerbias.errors import QueerbiasError
from queerbias.fileio import atomic_open, atomic_write

log = logging.getLogger(__name__)

STATE_KIND, STATE_VERSION = "queerbias-mastodon-crawl", 2
POSTS, REID, STATE, STATS = "posts.jsonl", "reid.jsonl", "state.json", "stats.json"
REMOVED_EARLIER = "removed_earlier"  # drop reason: the post or its author is on the removal list
RECOVERY_NEEDED = "recovery_needed"  # state key: when a takedown found the bookkeeping lost (refused until --recover)
RECOVER_HINT = ("; or, if there is no backup, run `queerbias crawl mastodon --recover --out {folder}`, which starts "
                "a new list from what is left, then repeat every takedown you recorded (`corpus forget`) and run "
                "`--refresh` before the next build")


class StoreError(QueerbiasError):
    """The output folder cannot be used as it is; the message says what to do."""


class NewsFolder(StoreError):
    """The folder holds a news crawl's state: no Mastodon store, and no place for one."""


def _json_bytes(obj) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode()


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def new_instance_stats() -> dict:
    return {"requests": 0, "fetched": 0, "kept": 0, "dropped": {}, "scrubbed": {}, "duplicates": 0, "words": 0,
            "bytes": 0}


def new_state(fingerprint: str) -> dict:
    return {"kind": STATE_KIND, "version": STATE_VERSION, "key_fingerprint": fingerprint, "records": 0,
            "rewriting": False, "created_at": _now(), "checked_at": None, "instances": {}, "sightings": {},
            "duplicates": 0, "removed": {}, "tombstones": {"posts": 0, "accounts": 0},
            "refresh": {"pass_started": None, "last": None}}


def read_state(folder: Path) -> dict | None:
    """state.json of a Mastodon store in `folder` (None if absent), or a one-line StoreError saying why not."""
    path = Path(folder) / STATE
    if not path.exists():
        return None
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise StoreError(f"{path} is unreadable ({err}); move it away and rerun: "
                         "the state is then rebuilt from the posts") from None
    if not isinstance(state, dict):
        raise StoreError(f"{path} is not a crawl state (not a JSON object)")
    if "seen" in state and "instances" not in state:
        raise NewsFolder(f"{path} belongs to a news crawl (queerbias crawl news); give the Mastodon crawl "
                         "its own --out folder")
    if state.get("version") == 1 and "instances" in state:
        raise StoreError(f"{path} was written by an older queerbias whose posts name their authors (uri, url); "
                         "crawl afresh into a new folder and delete this one")
    if state.get("kind") != STATE_KIND or state.get("version") != STATE_VERSION:
        raise StoreError(f"{path} is not a Mastodon crawl state of version {STATE_VERSION}")
    return state


def post_pseudonym(record: dict) -> str:
    return str(record["doc_id"]).removeprefix(DOC_PREFIX)


@dataclass
class _Meta:
    """What the store keeps in memory per post: where it was seen and whose it is."""

    account: str
    seen_on: list[str] = field(default_factory=list)


class CrawlStore:
    """Thread-safe owner of one output folder; every write goes through `commit` or `rewrite`."""

    def __init__(self, out_dir: Path, key: CrawlKey, purpose: str = "crawl", *, takedown: bool = False,
                 recover: bool = False):
        """Open (and lock) the store. A store whose bookkeeping is lost (see `_open_tombstones`) is refused,
        except for a takedown (`corpus forget`, which marks it as still needing recovery) and for `recover`."""
        self.dir = make_private_dir(Path(out_dir))
        self.key = key
        self._was_store = any((self.dir / name).exists() for name in (POSTS, REID, LOCK))  # see the module's doc
        self._folder_lock = FolderLock(self.dir, purpose)
        self._lock = threading.Lock()
        self._closed = False
        self.failure: str | None = None  # why writing stopped (disk full), for the main thread to report
        try:
            state = read_state(self.dir)
            self.rebuilt = state is None
            records = self._records_without_state() if state is None else state
            state = state or new_state(key.fingerprint)
            key.require_fingerprint(state.get("key_fingerprint"), self.dir / STATE)
            self.tombstones = self._open_tombstones(state, records, takedown=takedown, recover=recover)
            self.state = state
            self.state["tombstones"] = self.tombstones.counts()
            self.state["removal_list"] = self.tombstones.list_id
            self._meta = self._recover_posts()
            self._recover_reid()
            if self.rebuilt and self._meta:
                self.state["checked_at"] = self._oldest_check()
                log.warning("%s was missing; rebuilt it from the %d posts in %s (paging starts afresh)",
                            self.dir / STATE, len(self._meta), self.dir / POSTS)
            if not self.tombstones.saved:
                self.tombstones.save()
            self.purged = self._purge_removed()
            self._posts = open_private_append(self.dir / POSTS)
            self._reid = open_private_append(self.dir / REID)
            self._save(with_stats=True)
        except BaseException:
            self._folder_lock.release()
            raise

    # -- opening -------------------------------------------------------------------------------

    def _open_tombstones(self, state: dict, records: dict | None, *, takedown: bool, recover: bool) -> Tombstones:
        """The store's removal list, checked against what the store's records (state.json, else stats.json) say
        of it. Lost bookkeeping never re-admits a removal: when the list and both records are gone while posts
        remain, or an earlier takedown found them so (`recovery_needed`), the store is refused until the user
        recovers it explicitly (`crawl mastodon --recover`); a takedown still works on it and leaves it marked.
        Posts need not remain: a store a takedown emptied counts as much as one full of posts."""
        hint = RECOVER_HINT.format(folder=self.dir)
        if recover:
            state.pop(RECOVERY_NEEDED, None)
            state["recovered_at"] = _now()
            return Tombstones.load(self.dir, self.key)  # whatever list is left, or a new one
        lost = records is None and not Tombstones.present(self.dir) and self._was_store
        if lost or state.get(RECOVERY_NEEDED):
            if not takedown:
                raise StoreError(f"{self.dir} is a crawl store, but its list of removed posts and authors "
                                 f"({TOMBSTONES}) and the records of it ({STATE}, {STATS}) were lost, so posts "
                                 "removed earlier could come back; restore them from a backup" + hint)
            state[RECOVERY_NEEDED] = state.get(RECOVERY_NEEDED) or _now()
            return Tombstones.load(self.dir, self.key)
        records = records or {}
        return Tombstones.load(self.dir, self.key, expected=records.get("tombstones"),
                               list_id=records.get("removal_list"), recovery=hint)

    def _records_without_state(self) -> dict | None:
        """With state.json lost: stats.json (what it recorded of the removal list), after making sure the
        posts were written with this key; None when stats.json is gone too."""
        stats_path = self.dir / STATS
        if stats_path.exists():
            try:
                stats = json.loads(stats_path.read_text(encoding="utf-8"))
                recorded = stats.get("key_fingerprint")
            except (OSError, ValueError, AttributeError):
                stats = recorded = None
            if recorded:
                self.key.require_fingerprint(recorded, stats_path)
                return {"tombstones": stats.get("tombstones") if isinstance(stats.get("tombstones"), dict) else None,
                        "removal_list": stats.get("removal_list")}
        for post, sealed in self._reid_lines():
            self.key.unseal(post, sealed)
            return None
        if (self.dir / POSTS).exists() and (self.dir / POSTS).stat().st_size and not Tombstones.present(self.dir):
            raise StoreError(f"cannot tell which crawl key wrote {self.dir / POSTS}: state.json, stats.json and "
                             "reid.jsonl are missing; restore one of them")
        return None

    def _complete_lines(self, name: str) -> Iterator[bytes]:
        path = self.dir / name
        if not path.exists():
            return
        with open(path, "rb") as handle:
            for line in handle:
                if line.endswith(b"\n"):
                    yield line

    def _recover_posts(self) -> dict[str, _Meta]:
        """Keep the committed, readable lines of posts.jsonl and cut the rest; pseudonym -> _Meta of each post."""
        path = self.dir / POSTS
        committed = None if self.rebuilt or self.state.get("rewriting") else self.state["records"]
        meta: dict[str, _Meta] = {}
        kept: list[bytes] = []
        bad = 0
        for number, line in enumerate(self._complete_lines(POSTS)):
            if committed is not None and number >= committed:
                break
            try:
                record = json.loads(line)
                if "uri" in record or "url" in record:
                    raise StoreError(f"{path} was written by an older queerbias whose posts name their authors "
                                     "(uri, url); crawl afresh into a new folder and delete this one")
                pseudonym = post_pseudonym(record)
                sightings = self.state["sightings"].get(pseudonym) or record["seen_on"]
                meta[pseudonym] = _Meta(str(record["account"]), list(sightings))
            except (ValueError, KeyError, TypeError, AttributeError):
                bad += 1
                continue
            kept.append(line)
        if committed is not None and len(kept) + bad < committed:
            raise StoreError(f"{path} holds {len(kept) + bad} posts but {STATE} records {committed}: the file was "
                             "changed outside queerbias; restore it, or move state.json away to rebuild the state")
        size = path.stat().st_size if path.exists() else 0
        if bad:
            log.warning("%s: dropping %d damaged lines", path, bad)
            with atomic_open(path, "wb", permissions=PRIVATE_FILE) as handle:
                handle.writelines(kept)
        elif size != sum(map(len, kept)):
            log.warning("%s: cutting %d bytes of uncommitted or torn data", path, size - sum(map(len, kept)))
            with open(path, "r+b") as handle:
                handle.truncate(sum(map(len, kept)))
                handle.flush()
                os.fsync(handle.fileno())
        self.state["records"] = len(kept)
        self.state["rewriting"] = False
        return meta

    def _oldest_check(self) -> str | None:
        """When every post was last known to be wanted, from the sealed data; None if a post has none."""
        checks = [data.get("checked_at") for _, data in self.reidentification()]
        return min(checks) if len(checks) == len(self._meta) and all(checks) else None

    def _reid_lines(self) -> Iterator[tuple[str, str]]:
        for line in self._complete_lines(REID):
            try:
                entry = json.loads(line)
                yield str(entry["post"]), str(entry["sealed"])
            except (ValueError, KeyError, TypeError):
                continue

    def _recover_reid(self) -> None:
        """Keep exactly one sealed line per stored post (the last written), dropping the rest."""
        path = self.dir / REID
        lines = {post: sealed for post, sealed in self._reid_lines() if post in self._meta}
        expected = b"".join(_reid_line(post, sealed) for post, sealed in lines.items())
        current = path.read_bytes() if path.exists() else b""
        if current != expected:
            with atomic_open(path, "wb", permissions=PRIVATE_FILE) as handle:
                handle.write(expected)
        missing = len(self._meta) - len(lines)
        if missing:
            log.warning("%s: %d posts have no re-identification data; refresh cannot check them "
                        "(corpus forget still finds them by account)", path, missing)

    def _purge_removed(self) -> dict[str, str]:
        """Take out posts on the removal list that a crash between listing and removing them left behind;
        returns them (post pseudonym -> account pseudonym), so that a takedown finishing an interrupted one can
        say what it removed."""
        doomed = {p: reason for p, m in self._meta.items() if (reason := self.tombstones.covers(p, m.account))}
        purged = {p: self._meta[p].account for p in doomed}
        if doomed:
            self._rewrite(remove=doomed)
        return purged

    # -- writing -------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"{self.dir} is closed")

    def _instance(self, instance: str) -> dict:
        return self.state["instances"].setdefault(
            instance, {"cursors": {}, "stats": new_instance_stats(), "probe": None, "feeds": {}, "status": None})

    def cursor(self, instance: str, feed: str) -> dict:
        """A copy of the saved paging cursor of one feed ({} before its first page)."""
        with self._lock:
            return dict(self._instance(instance)["cursors"].get(feed) or {})

    def _append(self, posts: list[Post], seen_as: str) -> None:
        """Append sealed lines, then records; on a failed write cut both back and stop."""
        handles = (self._reid, self._posts)
        offsets = [handle.tell() for handle in handles]
        reid = b"".join(_reid_line(p.pseudonym, self.key.seal(p.pseudonym, p.reidentification)) for p in posts)
        records = b"".join((json.dumps({**p.record, "seen_on": [seen_as]}, ensure_ascii=False) + "\n").encode()
                           for p in posts)
        try:
            for handle, data in zip(handles, (reid, records)):
                write_all(handle, data)
                os.fsync(handle.fileno())
        except OSError as err:
            for handle, offset in zip(handles, offsets):
                try:
                    handle.truncate(offset)
                    handle.seek(offset)
                except OSError:
                    pass  # the next start cuts back to the committed posts anyway
            self._closed = True
            self.failure = (f"cannot write to {self.dir}: {err.strerror or err}; the crawl stopped, the posts "
                            "committed so far are safe; free space and rerun")
            raise StoreError(self.failure) from None

    def commit(self, instance: str, seen_as: str, posts: list[Post], *, feed: str | None = None,
               cursor: dict | None = None, stats: Counter | None = None, dropped: Counter | None = None,
               **report) -> None:
        """Append new `posts`, count known ones as sightings (the origin's copy replacing another server's),
        then save cursor, stats and `report` atomically.

        `seen_as` names the instance in `seen_on`; `report` may set `probe`, `status` or a feed's `feeds` entry.
        """
        with self._lock:
            self._check_open()
            inst = self._instance(instance)
            totals = inst["stats"]
            dropped = Counter(dropped or {})
            new, replace = [], {}
            for post in posts:
                if self.tombstones.covers(post.pseudonym, post.record["account"]):
                    dropped[REMOVED_EARLIER] += 1
                    continue
                known = self._meta.get(post.pseudonym)
                if known is None:
                    self._meta[post.pseudonym] = _Meta(post.record["account"], [seen_as])
                    new.append(post)
                    continue
                totals["duplicates"] += 1
                self.state["duplicates"] += 1
                if post.served_by_origin and known.seen_on and known.seen_on[0] != seen_as:
                    known.seen_on = [seen_as] + [s for s in known.seen_on if s != seen_as]
                    replace[post.pseudonym] = post
                elif seen_as not in known.seen_on:
                    known.seen_on.append(seen_as)
                else:
                    continue
                self.state["sightings"][post.pseudonym] = known.seen_on
            if new:
                self._append(new, seen_as)
                self.state["records"] += len(new)
                self.state["checked_at"] = self.state["checked_at"] or _now()
                for post in new:
                    totals["kept"] += 1
                    totals["words"] += len(post.record["text"].split())
                    totals["bytes"] += len(post.record["text"].encode())
                    _add_counts(totals.setdefault("scrubbed", {}), post.scrubbed)
            for key, value in (stats or {}).items():
                totals[key] += value
            _add_counts(totals["dropped"], dropped)
            if feed is not None and cursor is not None:
                inst["cursors"][feed] = cursor
            for key, value in report.items():
                if key == "feeds":
                    inst["feeds"].update(value)
                else:
                    inst[key] = value
            if replace:
                self._rewrite(records={p: post.record for p, post in replace.items()},
                              sealed={p: post.reidentification for p, post in replace.items()})
            self._save()

    def _save(self, with_stats: bool = False) -> None:
        """state.json after every change; stats.json (for people, derived from the state) on open, after
        rewrites and on close, not after every page."""
        atomic_write(self.dir / STATE, _json_bytes(self.state), permissions=PRIVATE_FILE)
        if with_stats:
            self._write_stats()

    def _write_stats(self) -> None:
        atomic_write(self.dir / STATS, _json_bytes(self._stats()), permissions=PRIVATE_FILE)

    def _rewrite(self, remove: dict[str, str] | None = None, records: dict[str, dict] | None = None,
                 sealed: dict[str, dict] | None = None) -> Counter:
        """Put `remove` (pseudonym -> reason) on the removal list, then rewrite posts.jsonl and reid.jsonl
        without them, with `records` replaced and `sealed` re-sealed, and recorded sightings merged into
        `seen_on`. Returns removals per reason."""
        remove, records, sealed = remove or {}, records or {}, sealed or {}
        if remove:
            self.tombstones.add(posts=remove)
            self.state["tombstones"] = self.tombstones.counts()
            self.state["removal_list"] = self.tombstones.list_id
        self.state["rewriting"] = True
        atomic_write(self.dir / STATE, _json_bytes(self.state), permissions=PRIVATE_FILE)
        reopen = hasattr(self, "_posts")
        if reopen:
            self._posts.close()
            self._reid.close()
        removed, kept = Counter(), 0
        with atomic_open(self.dir / POSTS, "wb", permissions=PRIVATE_FILE) as out:
            for line in self._complete_lines(POSTS):
                record = json.loads(line)
                pseudonym = post_pseudonym(record)
                if pseudonym in remove:
                    removed[remove[pseudonym]] += 1
                    continue
                kept += 1
                seen_on = self.state["sightings"].get(pseudonym)
                if pseudonym in records or seen_on:
                    record = {**records.get(pseudonym, record), "seen_on": seen_on or record["seen_on"]}
                    line = (json.dumps(record, ensure_ascii=False) + "\n").encode()
                out.write(line)
        killpoint.reached("removal")
        with atomic_open(self.dir / REID, "wb", permissions=PRIVATE_FILE) as out:
            for post, blob in self._reid_lines():
                if post in remove:
                    continue
                if post in sealed:
                    blob = self.key.seal(post, sealed[post])
                out.write(_reid_line(post, blob))
        killpoint.reached("removal")
        for pseudonym in remove:
            self._meta.pop(pseudonym, None)
        self.state["sightings"] = {}
        self.state["records"] = kept
        self.state["rewriting"] = False
        _add_counts(self.state["removed"], removed)
        if reopen:
            self._posts = open_private_append(self.dir / POSTS)
            self._reid = open_private_append(self.dir / REID)
        return removed

    def rewrite(self, remove: dict[str, str] | None = None, records: dict[str, dict] | None = None,
                sealed: dict[str, dict] | None = None, **state_updates) -> Counter:
        """Remove, replace or re-seal posts (refresh, takedown), update top-level state keys, save."""
        with self._lock:
            self._check_open()
            removed = self._rewrite(remove, records, sealed) if (remove or records or sealed) else Counter()
            self.state.update(state_updates)
            self._save(with_stats=True)
            return removed

    def remove_authors(self, accounts: dict[str, str], addresses: dict[str, str] | None = None) -> Counter:
        """Put `accounts` (pseudonym -> reason) on the removal list, with `addresses` of their posts (see
        `tombstones`), then remove all their posts; idempotent."""
        with self._lock:
            self._check_open()
            self.tombstones.add(accounts=accounts, addresses=addresses)
            self.state["tombstones"] = self.tombstones.counts()
            self.state["removal_list"] = self.tombstones.list_id
            doomed = {p: accounts[m.account] for p, m in self._meta.items() if m.account in accounts}
            removed = self._rewrite(remove=doomed) if doomed else Counter()
            self._save(with_stats=True)
            return removed

    def withdraw(self, accounts: dict[str, str], posts: dict[str, str]) -> Counter:
        """An opt-out a crawl saw applied at once: the stored posts of `accounts` and the stored `posts`
        (pseudonym -> reason) are listed and removed. Authors and posts that are not stored are left alone (an
        author who says no today may say yes later; nothing of theirs is kept either way)."""
        with self._lock:
            self._check_open()
            stored = {m.account for m in self._meta.values()}
            accounts = {a: r for a, r in accounts.items() if a in stored}
            posts = {p: r for p, r in posts.items() if p in self._meta}
            if accounts:
                self.tombstones.add(accounts=accounts)
            doomed = {p: accounts[m.account] for p, m in self._meta.items() if m.account in accounts}
            doomed.update({p: r for p, r in posts.items() if p not in doomed})
            removed = self._rewrite(remove=doomed) if doomed else Counter()
            if doomed:
                self._save(with_stats=True)
            return removed

    def forget(self, accounts: set[str]) -> Counter:
        """`corpus forget`: remove `accounts` for good, listing the addresses of their posts with them, so that a
        rerun after a kill still finds them by a link to a post that is gone."""
        addresses = {self.key.post_pseudonym(address): account for post, data in self.reidentification()
                     if (account := self.account_of(post)) in accounts
                     for address in (data.get("uri"), data.get("url")) if address}
        return self.remove_authors(dict.fromkeys(accounts, FORGOTTEN), addresses)

    # -- reading -------------------------------------------------------------------------------

    def posts_of(self, accounts: set[str]) -> set[str]:
        """Pseudonyms of the stored posts of `accounts`."""
        with self._lock:
            return {p for p, m in self._meta.items() if m.account in accounts}

    def account_of(self, pseudonym: str) -> str | None:
        with self._lock:
            meta = self._meta.get(pseudonym)
            return meta.account if meta else None

    def reidentification(self) -> Iterator[tuple[str, dict]]:
        """(post pseudonym, unsealed re-identification data) of every stored post that has it."""
        for post, blob in list(self._reid_lines()):
            if post in self._meta:
                yield post, self.key.unseal(post, blob)

    def _stats(self) -> dict:
        per_instance = {}
        for url, inst in sorted(self.state["instances"].items()):
            per_instance[url] = {**inst["stats"], "status": inst["status"], "feeds": inst["feeds"],
                                 "probe": inst["probe"], "admin_agreed": inst.get("admin_agreed", [])}
        bookkeeping = {name: self.state[name] for name in (RECOVERY_NEEDED, "recovered_at") if self.state.get(name)}
        return {"posts": self.state["records"], "duplicates": self.state["duplicates"],
                "removed": self.state["removed"], "tombstones": self.tombstones.counts(),
                "removal_list": self.tombstones.list_id, **bookkeeping,
                "key_fingerprint": self.key.fingerprint, "checked_at": self.state["checked_at"],
                "refresh": self.state["refresh"], "instances": per_instance}

    def stats(self) -> dict:
        """The content of stats.json: counts over all runs into this folder, no contacts, no handles."""
        with self._lock:
            return self._stats()

    def finalize(self) -> None:
        """Merge recorded cross-instance sightings into posts.jsonl's `seen_on`; same lines, same order."""
        with self._lock:
            if self.state["sightings"] and not self._closed:
                self._rewrite()
                self._save(with_stats=True)

    def close(self) -> None:
        """Stop all writing (a commit in progress finishes first) and release the folder."""
        with self._lock:
            if not self._closed and self.failure is None:
                self._write_stats()
            self._closed = True
            self._posts.close()
            self._reid.close()
            self._folder_lock.release()


def _add_counts(totals: dict, counts) -> None:
    for name, count in counts.items():
        totals[name] = totals.get(name, 0) + count


def _reid_line(post: str, sealed: str) -> bytes:
    return (json.dumps({"post": post, "sealed": sealed}) + "\n").encode()
