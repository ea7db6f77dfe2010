"""Parse RSS and Atom feeds (bytes we fetched ourselves) into a flat list of items.

An item is identified by its feed and guid (two sites that both number their items "1"
are two items), and by its link: absolute, host as an IDNA A-label, without fragment and
without tracking parameters (`utm_*`, `fbclid`, ...), so an article that feeds link with
different campaign tags is one article.
"""

from __future__ import annotations

import io
import time
import urllib.parse
from dataclasses import dataclass

import feedparser

from queerbias.crawl.canonical import canonical_url
from queerbias.crawl.quoting import quote
from queerbias.errors import DataError
from queerbias.text.html import html_to_text


@dataclass
class FeedItem:
    guid: str | None
    link: str | None  # canonical (`normalise_link`): what identifies the article
    address: str | None  # as the feed links it (absolute, without #fragment): what is fetched, since a site may
    # answer only the address it published (tracking parameters and all)
    title: str
    published: str | None  # ISO 8601, UTC
    language: str | None  # declared by the feed, e.g. "de-de"

    def keys(self, feed: str) -> list[str]:
        """Identities under which this item of `feed` counts as already seen."""
        return [key for key in (self.guid and guid_key(feed, self.guid), self.link and f"link:{self.link}") if key]


def guid_key(feed: str, guid: str) -> str:
    """The seen-key of a guid, which is unique only within its feed."""
    return f"guid:{normalise_link(feed, feed)} {guid}"


def normalise_link(link: str, base: str) -> str:
    """`link` made absolute against `base`, in the one canonical form (`canonical.canonical_url`: host as an
    A-label, no fragment, no tracking parameters)."""
    return canonical_url(urllib.parse.urljoin(base, link.strip()))


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
        try:
            address = urllib.parse.urldefrag(urllib.parse.urljoin(url, entry["link"].strip()))[0] \
                if entry.get("link") else None
            link = normalise_link(address, url) if address else None
        except ValueError:  # a hostile `http://[`: the item has no usable link
            address = link = None
        stamp = entry.get("published_parsed") or entry.get("updated_parsed")
        items.append(FeedItem(
            guid=(entry.get("id") or "").strip() or None,
            link=link,
            address=address,
            title=html_to_text(entry.get("title", "")),
            published=time.strftime("%Y-%m-%dT%H:%M:%SZ", stamp) if stamp else None,
            language=entry.get("language") or language,
        ))
    return items
