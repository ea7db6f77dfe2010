"""What a crawl fetches: instances, hashtags, keywords, limits. Defaults follow the seed study."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

from queerbias import __version__
from queerbias.errors import QueerbiasError
from queerbias.text.keywords import DEFAULT_KEYWORDS, keyword_to_tags

DEFAULT_INSTANCES: tuple[str, ...] = (
    "mastodon.social", "chaos.social", "mastodon.de", "troet.cafe", "convo.casa", "mindly.social",
    "muenchen.social", "lsbt.me", "berlin.social", "mstdn.social", "social.cologne",
)
CONTACT_PLACEHOLDER = "<your e-mail>"
DEFAULT_USER_AGENT = (f"queerbias-crawler/{__version__} (research corpus on anti-LGBTQ+ bias in German "
                      f"language models; contact: {CONTACT_PLACEHOLDER})")
# Anonymous paging is limited to about 300 requests per 15 minutes per instance (per IP);
# one run stays below that, so a crawl never has to sit out a whole window.
DEFAULT_MAX_REQUESTS = 250
LOCAL_FEED = "local"

_TAG = re.compile(r"^\w+$")


def default_tags(keywords=DEFAULT_KEYWORDS) -> list[str]:
    """The hashtags for the keywords, deduplicated in keyword order."""
    return list(dict.fromkeys(tag for keyword in keywords for tag in keyword_to_tags(keyword)))


def normalise_instance(value: str) -> str:
    """`chaos.social` or `https://chaos.social/` -> `https://chaos.social`; http is kept (local servers)."""
    raw = value.strip()
    parts = urlsplit(raw if "://" in raw else f"https://{raw}")
    if parts.scheme not in {"http", "https"} or not parts.netloc or parts.path not in {"", "/"}:
        raise QueerbiasError(f"not an instance URL: {value!r} (expected e.g. https://chaos.social)")
    return f"{parts.scheme}://{parts.netloc.lower()}"


def normalise_tag(value: str) -> str:
    tag = value.strip().lstrip("#").lower()
    if not _TAG.match(tag):
        raise QueerbiasError(f"not a hashtag: {value!r} (letters, digits and _ only; "
                             "write 'Trans Mann' as transmann)")
    return tag


@dataclass(frozen=True)
class CrawlSettings:
    """Everything one run needs; built by the CLI, passed to `crawler.crawl`."""

    out_dir: Path
    instances: tuple[str, ...] = tuple(normalise_instance(i) for i in DEFAULT_INSTANCES)
    tags: tuple[str, ...] = tuple(default_tags())
    keywords: tuple[str, ...] = DEFAULT_KEYWORDS
    local_timeline: bool = False
    since: datetime | None = None
    max_requests: int = DEFAULT_MAX_REQUESTS
    page_size: int = 40
    user_agent: str = DEFAULT_USER_AGENT
    token: str | None = field(default=None, repr=False)  # never printed, never stored
    token_instance: str | None = None
    salt_file: Path | None = None

    def feeds(self) -> list[str]:
        """Feed keys as stored in state.json: `tag:<name>` and, if asked for, `local`."""
        return [f"tag:{t}" for t in self.tags] + ([LOCAL_FEED] if self.local_timeline else [])

    def token_for(self, instance: str) -> str | None:
        """The access token goes to its own instance only, never to the others."""
        return self.token if self.token and instance == self.token_instance else None
