"""What a crawl store tells a corpus build: how fresh it is, and who must not be in it.

A built corpus is only as current as the crawl it came from: posts deleted upstream and
authors who opted out since are removed by `crawl mastodon --refresh`, and the store's
`checked_at` says when every stored post was last known to be wanted. The build records
that state with its inputs and refuses a store checked longer ago than the maximum age
(or never), unless told to proceed. It also drops the posts of everyone in the store's
forgotten list, whatever the posts file says.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from queerbias.crawl.mastodon.forgotten import Forgotten
from queerbias.crawl.mastodon.store import read_state
from queerbias.errors import QueerbiasError

MAX_CRAWL_AGE_DAYS = 30  # GDPR Art. 12(3): requests are answered within a month


@dataclass(frozen=True)
class CrawlSource:
    """The crawl state beside one posts.jsonl."""

    folder: Path
    key_fingerprint: str | None
    checked_at: str | None
    posts: int
    forgotten: frozenset[str]

    @classmethod
    def beside(cls, posts_file: Path) -> CrawlSource | None:
        """The Mastodon store `posts_file` belongs to, or None when there is no crawl state next to it."""
        folder = Path(posts_file).parent
        state = read_state(folder)
        if state is None:
            return None
        return cls(folder, state.get("key_fingerprint"), state.get("checked_at"), int(state.get("records") or 0),
                   Forgotten.load(folder).accounts)

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
        return {"key_fingerprint": self.key_fingerprint, "checked_at": self.checked_at, "posts": self.posts,
                "forgotten_accounts": len(self.forgotten)}
