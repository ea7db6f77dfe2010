"""One kept status, split into what the corpus may hold and what only the key may open.

The corpus record (a line of posts.jsonl) names the post and its author only by keyed
pseudonyms: no uri, no url, no handle, no instance-local id. What refresh and takedown
need to find the post again (its uri and url, the author's handle, the ids it has on the
servers that showed it) goes into the re-identification data, which the store seals
with the key before it touches the disk.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from urllib.parse import urlsplit

from queerbias.crawl.canonical import canonical_handle, origin
from queerbias.crawl.keys import CrawlKey
from queerbias.crawl.mastodon.cleaning import CleanedText, tags_in_text
from queerbias.text.keywords import KeywordMatcher
from queerbias.text.language import detect_language

DOC_PREFIX = "mastodon:"


class MalformedStatus(ValueError):
    """A status lacks what every Mastodon status has (uri, id, account, created_at)."""


def _required(status, name: str):
    value = status.get(name)
    if value in (None, ""):
        raise MalformedStatus(f"status without {name!r}")
    return value


def account_handle(status, local_domain: str | None = None) -> str:
    """`user@domain` of the status's author. Local accounts come without their domain: that is the
    instance's own (`local_domain`, from its probe), else the host of the account's URL."""
    account = status.get("account") or {}
    acct = str(_required(account, "acct"))
    if "@" not in acct:
        domain = local_domain or urlsplit(str(account.get("url") or status.get("uri") or "")).hostname or ""
        acct = f"{acct}@{domain}"
    return canonical_handle(acct)


def uri_host(uri: str) -> str:
    """The canonical `host[:port]` of a post's uri (or of any URL): the server it was written on."""
    return origin(uri).partition("://")[2]


@dataclass
class Post:
    """A status as one crawled server showed it."""

    pseudonym: str            # keyed hash of the uri; `doc_id` is DOC_PREFIX + pseudonym
    record: dict              # the posts.jsonl line, without `seen_on` (the store sets it)
    reidentification: dict    # sealed by the store: uri, url, account, sources, checked_at
    served_by_origin: bool    # this copy came from the server the post was written on
    scrubbed: Counter = field(default_factory=Counter)  # personal data replaced in the text, per kind


def make_post(status, cleaned: CleanedText, *, key: CrawlKey, matcher: KeywordMatcher, instance: str,
              local_domain: str | None = None, now: datetime | None = None) -> Post:
    """The Post for an unwrapped original `status` whose cleaned text is `cleaned`, seen on `instance`
    (whose local accounts live on `local_domain`)."""
    text = cleaned.text
    uri = str(_required(status, "uri"))
    local_id = str(_required(status, "id"))
    created = _required(status, "created_at")
    if not isinstance(created, datetime):
        raise MalformedStatus("status with an unreadable 'created_at'")
    handle = account_handle(status, local_domain)
    pseudonym = key.post_pseudonym(uri)
    record = {
        "doc_id": DOC_PREFIX + pseudonym,
        "account": key.account_pseudonym(handle),
        "created_at": created.astimezone(timezone.utc).isoformat(),
        "language": status.get("language") or detect_language(text)[0],
        "text": text,
        "tags": tags_in_text(status.get("tags"), text),
        "keywords": matcher.find(text),
    }
    reidentification = {
        "uri": uri, "url": str(status.get("url") or uri), "account": handle,
        "sources": {instance: local_id},
        "checked_at": (now or datetime.now(timezone.utc)).isoformat(timespec="seconds"),
    }
    return Post(pseudonym, record, reidentification, served_by_origin=uri_host(uri) == uri_host(instance),
                scrubbed=Counter(cleaned.scrubbed))
