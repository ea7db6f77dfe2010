"""Ask an instance what it allows before crawling it.

`/api/v2/instance` tells the Mastodon version, the rules and, since 4.4, whether
hashtag and live feeds are public, login-only or disabled. Knowing that up front
is what lets the crawler report "needs login" or "disabled" instead of mistaking
an empty answer for "no posts".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from mastodon import MastodonAPIError, MastodonNotFoundError

from queerbias.crawl.mastodon.client import Caller

PUBLIC, LOGIN_REQUIRED, DISABLED, UNKNOWN = "public", "login_required", "disabled", "unknown"


@dataclass
class ProbeResult:
    """What stats.json reports about an instance under `probe`."""

    version: str | None = None
    title: str | None = None
    hashtag_feeds: str = UNKNOWN   # PUBLIC, LOGIN_REQUIRED, DISABLED or UNKNOWN (older servers)
    live_feeds: str = UNKNOWN
    rules: list[str] = field(default_factory=list)
    terms_of_service: str | None = None   # "published", "not published" or None when not asked
    contact: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def _access(feed_config, authenticated: bool) -> str:
    """Fold Mastodon's per-feed local/remote settings into one answer for an anonymous or logged-in client."""
    if not feed_config:
        return UNKNOWN
    values = {feed_config.get("local"), feed_config.get("remote")}
    if "public" in values:
        return PUBLIC
    if "authenticated" in values:
        return PUBLIC if authenticated else LOGIN_REQUIRED
    return DISABLED


def probe_instance(caller: Caller) -> ProbeResult:
    """Version, feed access, rules and terms of `caller`'s instance; falls back to v1 on old servers."""
    api = caller.api
    authenticated = api.access_token is not None
    result = ProbeResult()
    try:
        info = caller.call(api.instance_v2)
    except MastodonNotFoundError:  # Mastodon < 4.0 has only v1
        info = caller.call(api.instance_v1)
        result.version, result.title = info.get("version"), info.get("title")
        result.rules = [r.get("text", "") for r in info.get("rules") or []]
        return result
    result.version, result.title = info.get("version"), info.get("title")
    result.contact = (info.get("contact") or {}).get("email")
    result.rules = [r.get("text", "") for r in info.get("rules") or []]
    access = (info.get("configuration") or {}).get("timelines_access") or {}
    result.hashtag_feeds = _access(access.get("hashtag_feeds"), authenticated)
    result.live_feeds = _access(access.get("live_feeds"), authenticated)
    try:
        terms = caller.call(api.instance_terms_of_service)
        result.terms_of_service = "published" if terms.get("content") else "not published"
    except MastodonAPIError:  # 404 before 4.4 or when the admin has not written any
        result.terms_of_service = "not published"
    return result
