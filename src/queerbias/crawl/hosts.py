"""Host names compared as IDNA A-labels, however a person or a server wrote them.

Mastodon sends `anna@xn--bcher-kva.example`; people write `anna@bücher.example`, in
capitals, with a fullwidth dot. A takedown, a deny-list entry or a pseudonym that compares
the two spellings as strings misses the person. Every host the crawlers compare, store or
hash (handles, instance URLs, deny-lists, post uris, opt-out URLs, robots.txt origins) is
therefore first brought to one form: lower case, IDNA 2008 A-labels after UTS #46 mapping
(`bücher.example` -> `xn--bcher-kva.example`). A name that IDNA refuses (an underscore, a
hostile string) still gets one stable form: each non-ASCII label case-folded and
Punycode-encoded, so both spellings of it still meet.
"""

from __future__ import annotations

import unicodedata
from urllib.parse import urlsplit, urlunsplit

import idna

_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})  # the dots IDNA accepts between labels


def a_label(host: str) -> str:
    """`Bücher.Example` -> `xn--bcher-kva.example`; ASCII hosts and IP addresses in lower case."""
    host = host.strip().translate(_DOTS).rstrip(".")
    if host.isascii():
        return host.lower()
    try:
        return idna.encode(host, uts46=True, transitional=False).decode("ascii").lower()
    except (idna.IDNAError, UnicodeError, ValueError):
        labels = unicodedata.normalize("NFKC", host).casefold().split(".")
        return ".".join(label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii")
                        for label in labels)


def normalise_netloc(netloc: str) -> str:
    """`host[:port]` with the host as an A-label (IPv6 literals keep their brackets)."""
    netloc = netloc.strip().rpartition("@")[2]  # user info never identifies a server
    if netloc.startswith("["):
        return netloc.lower()
    host, colon, port = netloc.rpartition(":")
    if not colon or not port.isdigit():
        host, colon, port = netloc, "", ""
    return a_label(host) + colon + port


def normalise_url(url: str) -> str:
    """`url` with scheme and host normalised (lower case, A-label), path, query and fragment as written; a URL
    that does not parse (a hostile `http://[`) is only stripped."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return url.strip()
    return urlunsplit((parts.scheme.lower(), normalise_netloc(parts.netloc), parts.path, parts.query,
                       parts.fragment))


def origin(url: str) -> str:
    """`scheme://host[:port]` of `url`, normalised ("" for a URL that does not parse)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return ""
    return f"{parts.scheme.lower()}://{normalise_netloc(parts.netloc)}"
