"""Ask an instance what it allows before crawling it.

`/robots.txt` says whether crawlers are welcome at the API: our agent (the User-Agent's
token and the project's, whatever `--user-agent` says) and the AI-training crawlers
(GPTBot and the like), each at the path of every feed we would page. `/api/v2/instance` tells
the Mastodon version, the rules and, since 4.4, whether hashtag and live feeds are
public, login-only or disabled. Knowing that up front is what lets the crawler report
"needs login" or "disabled" instead of mistaking an empty answer for "no posts", and
skip an instance whose admin said no. An answer that is not Mastodon's (an HTML site, a
Misskey server) ends the probe with one line, without retries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from urllib.parse import urlsplit

import requests
from mastodon import MastodonAPIError, MastodonNotFoundError

from queerbias.crawl.addresses import RefusedAddress, UnresolvableHost
from queerbias.crawl.agent import AI_TRAINING_AGENTS, our_agents
from queerbias.crawl.canonical import canonical_host
from queerbias.crawl.mastodon.client import Caller, Refused, RequestBudgetExhausted
from queerbias.crawl.mastodon.transport import RefusedAnswer
from queerbias.crawl.quoting import quote
from queerbias.crawl.robots import RobotsRules
from queerbias.text.scrub import scrub_personal_data

PUBLIC, LOGIN_REQUIRED, DISABLED, UNKNOWN = "public", "login_required", "disabled", "unknown"
ROBOTS_ALLOW, ROBOTS_DISALLOW, ROBOTS_NONE, ROBOTS_UNREACHABLE = (
    "allowed", "disallowed", "no robots.txt", "unreachable")
# What robots.txt is asked about for the instance as a whole: a first page of a hashtag feed, with the query every
# request of ours carries (RFC 9309, section 2.2.2, matches rules against the path and the query).
API_PATH = "/api/v1/timelines/tag/queer?limit=40"


class NotMastodon(Exception):
    """The server does not speak the Mastodon API."""


@dataclass
class ProbeResult:
    """What stats.json reports about an instance under `probe`: no contacts, rules without personal data."""

    version: str | None = None
    title: str | None = None
    domain: str | None = None   # the domain of the instance's local accounts (`alice` is `alice@domain`)
    hashtag_feeds: str = UNKNOWN   # PUBLIC, LOGIN_REQUIRED, DISABLED or UNKNOWN (older servers)
    live_feeds: str = UNKNOWN
    rules: list[str] = field(default_factory=list)
    terms_of_service: str | None = None   # "published", "not published" or None when not asked
    robots: str = ROBOTS_NONE             # for our agent at the API: ROBOTS_* above
    ai_crawlers_disallowed: bool = False  # robots.txt shuts out an AI-training crawler (GPTBot, ...) at the API
    robots_refusal: Callable[[str], str | None] = field(default=lambda path: None, repr=False, compare=False)

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "robots_refusal"}


def _access(feed_config) -> str:
    """Fold Mastodon's per-feed local/remote settings into one answer. A token does not change it: a feed
    the admin made login-only stays LOGIN_REQUIRED, whoever asks."""
    if not isinstance(feed_config, dict) or not feed_config:
        return UNKNOWN
    values = {feed_config.get("local"), feed_config.get("remote")}
    if "public" in values:
        return PUBLIC
    if "authenticated" in values:
        return LOGIN_REQUIRED
    return DISABLED


def _robots(caller: Caller, result: ProbeResult) -> None:
    """Read /robots.txt (RFC 9309, `queerbias.crawl.robots`). A 4xx answer means no rules (section 2.3.1.3). A
    5xx answer or none means the wishes are unknown (2.3.1.4), and the instance is not crawled. So does a 429,
    although the RFC counts it with the 4xx answers: a server too busy to answer has not said yes."""
    api = caller.api
    if caller.requests >= caller.max_requests:
        raise RequestBudgetExhausted(f"{caller.requests} requests")
    url = api.api_base_url + "/robots.txt"
    try:
        response = api.session.get(url, timeout=api.request_timeout,
                                   headers={"User-Agent": api.user_agent, "Accept": "text/plain"})
    except (UnresolvableHost, RefusedAddress, RefusedAnswer) as err:
        raise Refused(str(err)) from None
    except requests.RequestException:
        result.robots = ROBOTS_UNREACHABLE
        return
    if 400 <= response.status_code < 500 and response.status_code != 429:
        return
    if response.status_code != 200:
        result.robots = ROBOTS_UNREACHABLE
        return
    rules = RobotsRules.from_bytes(response.content, response.encoding if "charset" in
                                   response.headers.get("Content-Type", "").lower() else None)
    ours = our_agents(api.user_agent)

    def robots_refusal(address: str) -> str | None:
        """Why robots.txt keeps us from `address` (a URL, or a path with its query), or None; the reason names
        the path alone, so that the pages of one feed give one reason."""
        path = urlsplit(address).path
        if not all(rules.allowed(agent, address) for agent in ours):
            return f"its robots.txt disallows our crawler at {path}"
        if not all(rules.allowed(agent, path) for agent in AI_TRAINING_AGENTS):
            return (f"its robots.txt disallows AI-training crawlers (GPTBot and the like) at {path}, and this "
                    "corpus trains language models")
        return None

    result.robots_refusal = robots_refusal
    result.robots = ROBOTS_ALLOW if all(rules.allowed(a, API_PATH) for a in ours) else ROBOTS_DISALLOW
    result.ai_crawlers_disallowed = not all(rules.allowed(a, API_PATH) for a in AI_TRAINING_AGENTS)


def _not_mastodon(caller: Caller, what: str) -> NotMastodon:
    return NotMastodon(f"not a Mastodon API: {caller.api.api_base_url}/api/v2/instance answered {what}")


def _instance_info(caller: Caller):
    """/api/v2/instance, or /api/v1/instance on servers before 4.0; NotMastodon if neither is Mastodon's."""
    api = caller.api
    try:
        try:
            info, v2 = caller.call(api.instance_v2), True
        except MastodonNotFoundError:  # Mastodon < 4.0 has only v1
            info, v2 = caller.call(api.instance_v1), False
    except MastodonNotFoundError:
        raise _not_mastodon(caller, "404 Not Found (no Mastodon API here)") from None
    except MastodonAPIError as err:
        first = str(err.args[0]) if err.args else ""
        if first.startswith("Could not parse response as JSON"):
            raise _not_mastodon(caller, "with something that is not JSON (a web page?)") from None
        raise
    if not isinstance(info, dict) or not isinstance(info.get("version"), str):
        raise _not_mastodon(caller, "JSON without a Mastodon version")
    return info, v2


def probe_instance(caller: Caller) -> ProbeResult:
    """robots.txt, version, feed access, rules and terms of `caller`'s instance."""
    api = caller.api
    result = ProbeResult()
    _robots(caller, result)
    info, v2 = _instance_info(caller)
    result.version = quote(scrub_personal_data(str(info.get("version"))), 40)
    # like the rules: a one-person server's title may hold its owner's handle or address
    result.title = quote(scrub_personal_data(str(info.get("title") or "")), 80)
    domain = info.get("domain") if v2 else info.get("uri")
    result.domain = canonical_host(quote(domain, 253)) if isinstance(domain, str) and domain else None
    result.rules = [quote(scrub_personal_data(str(r.get("text", "")))) for r in info.get("rules") or []
                    if isinstance(r, dict)]
    if not v2:
        return result
    configuration = info.get("configuration") if isinstance(info.get("configuration"), dict) else {}
    access = configuration.get("timelines_access") or {}
    if isinstance(access, dict):
        result.hashtag_feeds = _access(access.get("hashtag_feeds"))
        result.live_feeds = _access(access.get("live_feeds"))
    try:
        terms = caller.call(api.instance_terms_of_service)
        result.terms_of_service = "published" if isinstance(terms, dict) and terms.get("content") else "not published"
    except MastodonAPIError:  # 404 before 4.4 or when the admin has not written any
        result.terms_of_service = "not published"
    return result
