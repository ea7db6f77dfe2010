"""What a crawl fetches: instances, hashtags, keywords, limits, and whose wishes bind it. Defaults follow the seed study."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

from queerbias.crawl.agent import build_user_agent
from queerbias.crawl.canonical import origin
from queerbias.crawl.keys import default_key_file
from queerbias.errors import QueerbiasError
from queerbias.text.keywords import DEFAULT_KEYWORDS, keyword_to_tags

DEFAULT_INSTANCES: tuple[str, ...] = (
    "mastodon.social", "chaos.social", "mastodon.de", "troet.cafe", "convo.casa", "mindly.social",
    "muenchen.social", "lsbt.me", "berlin.social", "mstdn.social", "social.cologne",
)
PRODUCT = "queerbias-crawler"
# Anonymous paging is limited to about 300 requests per 15 minutes per instance (per IP);
# one run stays below that, so a crawl never has to sit out a whole window.
DEFAULT_MAX_REQUESTS = 250
LOCAL_FEED = "local"

_TAG = re.compile(r"^\w+$")


def default_tags(keywords=DEFAULT_KEYWORDS) -> list[str]:
    """The hashtags for the keywords, deduplicated in keyword order."""
    return list(dict.fromkeys(tag for keyword in keywords for tag in keyword_to_tags(keyword)))


def normalise_instance(value: str) -> str:
    """`chaos.social` or `https://chaos.social/` -> `https://chaos.social`, the host as an IDNA A-label;
    http is kept (local servers)."""
    raw = value.strip()
    parts = urlsplit(raw if "://" in raw else f"https://{raw}")
    if parts.scheme not in {"http", "https"} or not parts.netloc or "@" in parts.netloc \
            or parts.path not in {"", "/"}:
        raise QueerbiasError(f"not an instance URL: {value!r} (expected e.g. https://chaos.social)")
    return origin(raw if "://" in raw else f"https://{raw}")


def normalise_tag(value: str) -> str:
    tag = value.strip().lstrip("#").lower()
    if not _TAG.match(tag):
        raise QueerbiasError(f"not a hashtag: {value!r} (letters, digits and _ only; "
                             "write 'Trans Mann' as transmann)")
    return tag


def is_loopback(url: str) -> bool:
    """Whether `url` points at this machine (`localhost`, 127.0.0.0/8, ::1)."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_token_transport(instance: str) -> None:
    """An access token travels only over https, or to this machine (test servers)."""
    if urlsplit(instance).scheme != "https" and not is_loopback(instance):
        raise QueerbiasError(f"refusing to send an access token to {instance} over plain http; "
                             "use its https:// address")


@dataclass(frozen=True)
class CrawlSettings:
    """Everything one run needs; built by the CLI, passed to `crawler.crawl` or `refresh.refresh`."""

    out_dir: Path
    user_agent: str = field(default="", repr=False)  # must carry a contact; see queerbias.crawl.agent
    instances: tuple[str, ...] = tuple(normalise_instance(i) for i in DEFAULT_INSTANCES)
    tags: tuple[str, ...] = tuple(default_tags())
    keywords: tuple[str, ...] = DEFAULT_KEYWORDS
    local_timeline: bool = False
    since: datetime | None = None
    max_requests: int = DEFAULT_MAX_REQUESTS
    page_size: int = 40
    request_timeout: float = 30.0  # seconds for a whole request, answer included
    token: str | None = field(default=None, repr=False)  # never printed, never stored
    token_instance: str | None = None
    key_file: Path = field(default_factory=default_key_file)
    allowed_instances: frozenset[str] = frozenset()  # admins who agreed despite robots.txt, rules or login-only feeds
    deny_list: frozenset[str] = frozenset()          # hosts never crawled, nor their users' posts kept
    accept_missing_indexable: bool = False           # treat old servers' missing `indexable` as consent

    def __post_init__(self) -> None:
        build_user_agent(PRODUCT, None, self.user_agent)  # refuses an agent without a contact
        if self.token:
            check_token_transport(self.token_instance or "")

    def feeds(self) -> list[str]:
        """Feed keys as stored in state.json: `tag:<name>` and, if asked for, `local`."""
        return [f"tag:{t}" for t in self.tags] + ([LOCAL_FEED] if self.local_timeline else [])

    def token_for(self, instance: str) -> str | None:
        """The access token goes to its own instance only, never to the others."""
        return self.token if self.token and instance == self.token_instance else None

    def allowed(self, instance: str) -> bool:
        """Whether the admin of `instance` explicitly agreed to be crawled (`--allow-instance`)."""
        return instance in self.allowed_instances
