"""Parse RSS and Atom feeds (bytes we fetched ourselves) into a flat list of items."""

from __future__ import annotations

import io
import time
import urllib.parse
from dataclasses import dataclass

import feedparser

from queerbias.crawl.quoting import quote
from queerbias.errors import DataError
from queerbias.text.html import html_to_text


@dataclass
class FeedItem:
    guid: str | None
    link: str | None  # absolute, without #fragment
    title: str
    published: str | None  # ISO 8601, UTC
    language: str | None  # declared by the feed, e.g. "de-de"

    def keys(self) -> list[str]:
        """Identities under which this item counts as already seen."""
        return [key for key in (self.guid and f"guid:{self.guid}",
                                self.link and f"link:{self.link}") if key]


def normalise_link(link: str, base: str) -> str:
    """Absolute URL with lower-case scheme and host and no fragment."""
    parts = urllib.parse.urlsplit(urllib.parse.urljoin(base, link.strip()))
    return urllib.parse.urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/",
                                    parts.query, ""))


def parse_feed(body: bytes, url: str) -> list[FeedItem]:
    """Items of an RSS or Atom document; DataError if it is not a feed at all."""
    # A BytesIO, never raw bytes or str: feedparser treats a str/bytes that names a
    # path or URL as something to open, which a hostile server could exploit.
    parsed = feedparser.parse(io.BytesIO(body), response_headers={"content-location": url},
                              sanitize_html=True, resolve_relative_uris=True)
    if parsed.bozo and not parsed.entries:
        raise DataError(url, f"not an RSS/Atom feed: {quote(parsed.get('bozo_exception'))}")
    language = parsed.feed.get("language")
    items = []
    for entry in parsed.entries:
        link = entry.get("link")
        stamp = entry.get("published_parsed") or entry.get("updated_parsed")
        items.append(FeedItem(
            guid=(entry.get("id") or "").strip() or None,
            link=normalise_link(link, url) if link else None,
            title=html_to_text(entry.get("title", "")),
            published=time.strftime("%Y-%m-%dT%H:%M:%SZ", stamp) if stamp else None,
            language=entry.get("language") or language,
        ))
    return items
