"""What a crawl store tells a corpus build: how fresh it is, and what must not be in it.

A built corpus is only as current as the crawl it came from: posts deleted upstream and
authors who opted out since are removed by `crawl mastodon --refresh`, and the store's
`checked_at` says when every stored post was last known to be wanted. The build records
that state with its inputs and refuses a store checked longer ago than the maximum age
(or never), unless told to proceed.

It also drops every post, and every post of every author, on the removal list of a store
it reads or of its own output folder (`crawl.mastodon.tombstones`), whatever the posts
file says: a posts.jsonl restored from a backup brings nobody back. The lists are sealed,
so the build needs the crawl key; a store whose list is missing or does not open is refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from queerbias.crawl.documents import Document
from queerbias.crawl.keys import CrawlKey, default_key_file
from queerbias.crawl.mastodon.records import DOC_PREFIX
from queerbias.crawl.mastodon.store import (
    RECOVER_HINT,
    RECOVERY_NEEDED,
    REID,
    STATE,
    STATS,
    NewsFolder,
    read_state,
)
from queerbias.crawl.mastodon.tombstones import Tombstones
from queerbias.errors import QueerbiasError

MAX_CRAWL_AGE_DAYS = 30  # GDPR Art. 12(3): requests are answered within a month


@dataclass(frozen=True)
class CrawlSource:
    """The crawl state beside one posts.jsonl."""

    folder: Path
    key_fingerprint: str | None
    checked_at: str | None
    posts: int
    tombstones: Tombstones
    admin_agreed: int  # instances crawled despite a refusal because their admin agreed (--allow-instance)

    @classmethod
    def beside(cls, posts_file: Path, key: Callable[[], CrawlKey]) -> CrawlSource | None:
        """The Mastodon store `posts_file` belongs to (its removal list opened with `key()`), or None when
        nothing of a store lies next to it. With state.json lost, stats.json stands in for it; a store whose
        removal list and both records are lost (or that a takedown found so) is refused, as by the crawler."""
        folder = Path(posts_file).parent
        try:
            state = read_state(folder)
        except NewsFolder:  # a news crawl's own folder: its news.jsonl has no Mastodon store beside it
            return None
        if state is None:
            state = _stats_as_state(folder)
        if state is None and not Tombstones.present(folder):
            if (folder / REID).exists():
                raise QueerbiasError(f"{folder} is a crawl store whose list of removed posts and authors and the "
                                     "records of it were lost, so removals could come back; restore them from a "
                                     "backup" + RECOVER_HINT.format(folder=folder))
            return None
        state = state or {}
        if state.get(RECOVERY_NEEDED):
            raise QueerbiasError(f"{folder}: a takedown found this store's bookkeeping lost; restore it from a "
                                 "backup" + RECOVER_HINT.format(folder=folder))
        if state.get("recovered_at"):
            raise QueerbiasError(f"{folder} was recovered at {state['recovered_at']} after its bookkeeping was lost: "
                                 f"run `queerbias crawl mastodon --refresh --out {folder}` (a complete pass) before "
                                 "building from it")
        crawl_key = key()
        crawl_key.require_fingerprint(state.get("key_fingerprint"), folder / STATE)
        recorded = state.get("tombstones")
        recovery = RECOVER_HINT.format(folder=folder) if recorded is not None else (
            f" (a store of an older queerbias gains it with one `queerbias crawl mastodon --refresh --out {folder}`)")
        tombstones = Tombstones.load(folder, crawl_key, expected=recorded, list_id=state.get("removal_list"),
                                     required=True, recovery=recovery)
        agreed = sum(bool(inst.get("admin_agreed")) for inst in (state.get("instances") or {}).values())
        posts = state.get("records", state.get("posts"))
        return cls(folder, state.get("key_fingerprint"), state.get("checked_at"), int(posts or 0), tombstones,
                   agreed)

    def age_days(self, now: datetime) -> float | None:
        if not self.checked_at:
            return None
        return (now - datetime.fromisoformat(self.checked_at)).total_seconds() / 86400

    def require_fresh(self, now: datetime, max_age_days: float) -> None:
        """Refuse a store whose posts were not all checked within `max_age_days`."""
        age = self.age_days(now)
        if age is None or age > max_age_days:
            when = f"last checked {self.checked_at}" if self.checked_at else "never checked"
            raise QueerbiasError(
                f"the crawl in {self.folder} is stale ({when}, more than {max_age_days:g} days ago): deleted posts "
                f"and later opt-outs may still be in it; run `queerbias crawl mastodon --refresh --out "
                f"{self.folder}` first, or pass --allow-stale to build anyway")

    def as_dict(self) -> dict:
        counts = self.tombstones.counts()
        return {"key_fingerprint": self.key_fingerprint, "checked_at": self.checked_at, "posts": self.posts,
                "removed_posts": counts["posts"], "removed_accounts": counts["accounts"],
                "instances_admin_agreed": self.admin_agreed}


def _stats_as_state(folder: Path) -> dict | None:
    """A store's stats.json, which records what state.json does of freshness and the removal list (None when it is
    missing or is not a store's)."""
    try:
        stats = json.loads((folder / STATS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return stats if isinstance(stats, dict) and stats.get("key_fingerprint") and "instances" in stats else None


class Removals:
    """Everything one build must leave out: the union of the removal lists it read."""

    def __init__(self, key_file: Path | None = None):
        self._key_file = key_file
        self._key: CrawlKey | None = None
        self.posts: set[str] = set()
        self.accounts: set[str] = set()

    def key(self) -> CrawlKey:
        """The crawl key, opened when a list first needs it (a build of news and taz alone needs none)."""
        if self._key is None:
            self._key = CrawlKey.existing(self._key_file or default_key_file())
        return self._key

    def add(self, tombstones: Tombstones) -> None:
        self.posts |= set(tombstones.posts)
        self.accounts |= set(tombstones.accounts)

    def add_folder(self, folder: Path) -> Tombstones | None:
        """The list a `corpus forget` left in a built corpus's folder, if there is one, checked against what the
        corpus's statistics recorded of it (so a list deleted, or copied from another corpus, is refused)."""
        record = corpus_list_record(folder)
        if not Tombstones.present(folder) and not record:
            return None
        tombstones = Tombstones.load(folder, self.key(), list_id=record.get("list"),
                                     expected={k: record[k] for k in ("posts", "accounts") if k in record})
        self.add(tombstones)
        return tombstones

    def covers_post(self, doc_id: str, account: str | None) -> bool:
        """Whether the post `doc_id` (`mastodon:` + pseudonym) by `account` is on a removal list."""
        return account is not None and (account in self.accounts or doc_id.removeprefix(DOC_PREFIX) in self.posts)

    def covers(self, document: Document) -> bool:
        """Whether `document` is a post on a removal list, or by an author on one."""
        return self.covers_post(document.doc_id, document.provenance.get("account"))


PENDING_STATS = ".forget-stats.json"  # a corpus's statistics while `corpus forget` rewrites it


def corpus_list_record(folder: Path) -> dict:
    """What a built corpus's statistics (stats.json, or the copy a takedown keeps while it rewrites the corpus)
    recorded of its removal list: id and counts; {} when nothing is recorded."""
    for name in (PENDING_STATS, "stats.json"):
        try:
            stats = json.loads((Path(folder) / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        record = stats.get("removal_list") if isinstance(stats, dict) else None
        return record if isinstance(record, dict) else {}
    return {}
