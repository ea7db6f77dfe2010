"""One canonical form for hosts, handles and URLs, however a person or a server wrote them.

Mastodon sends `anna@xn--bcher-kva.example`; people write `anna@bücher.example`, in
capitals, in fullwidth letters, or percent-encoded (`b%C3%BCcher.example`, which RFC 3986
allows and browsers read as `bücher.example`). A takedown, a deny-list entry, an opt-out
list or a pseudonym that compares two spellings as strings misses the person. Every host,
handle and URL the crawlers and the corpus build compare, hash or list is therefore brought
to the one form below, when it is written and when it is matched:

- a host: percent-decoded, NFKC, the dots IDNA accepts as dots, no trailing dot, lower
  case, and IDNA 2008 A-labels after UTS #46 mapping (`bücher.example` ->
  `xn--bcher-kva.example`). This is the `idna` package, not Python's built-in `idna`
  codec, which implements IDNA 2003 (it maps `ß` to `ss`). A name that IDNA refuses (an
  underscore, a hostile string) still gets one stable form: each non-ASCII label
  case-folded and Punycode-encoded, so both spellings of it still meet;
- a handle `user@host`: NFKC (fullwidth letters, `＠`), no leading `@`, the user in lower
  case, the host as above;
- a URL, normalised as RFC 3986 section 6.2.2 says and a little more: scheme and host in
  lower case (6.2.2.1), the host as above, the default port dropped and an empty path
  written `/` (6.2.3), percent-encodings decoded where they stand for characters other than
  delimiters (6.2.2.2, extended to UTF-8 as RFC 3987 section 3.1 maps IRIs), the path in
  NFKC and percent-encoded again where it must be, so that the form can also be fetched;
  tracking parameters (`utm_*`, `fbclid`, ...) and the fragment dropped. The path keeps
  its case: RFC 3986 makes it case-sensitive, and a takedown compares profile paths without
  case itself (Mastodon's usernames have none).

Each function is idempotent: a canonical form stays what it is.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

import idna

_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})  # the dots IDNA accepts between labels
_DEFAULT_PORTS = {"http": "80", "https": "443"}
TRACKING = re.compile(r"^(?:utm_\w*|fbclid|gclid|dclid|msclkid|mc_cid|mc_eid|igshid|_hsenc|_hsmi|wt_mc|wt\.mc_id)$",
                      re.IGNORECASE)
_ESCAPES = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
_KEPT_ENCODED = frozenset("%/?#")  # decoded, these would change where the path ends or how it reads again
# What a path may hold unencoded (RFC 3986 3.3: unreserved, sub-delims, ":" and "@", and "/" between segments).
_PATH_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@/%")


def canonical_host(host: str) -> str:
    """`B%C3%BCcher.Example.` -> `xn--bcher-kva.example`; ASCII hosts and IP addresses in lower case."""
    host = unicodedata.normalize("NFKC", unquote(host.strip(), errors="replace")).translate(_DOTS).rstrip(".")
    if host.isascii():
        return host.lower()
    try:
        return idna.encode(host, uts46=True, transitional=False).decode("ascii").lower()
    except (idna.IDNAError, UnicodeError, ValueError):
        labels = host.casefold().split(".")
        return ".".join(label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii")
                        for label in labels)


def canonical_netloc(netloc: str, scheme: str = "") -> str:
    """`host[:port]` with the host canonical (IPv6 literals keep their brackets), the port dropped where it is
    `scheme`'s default."""
    netloc = netloc.strip().rpartition("@")[2]  # user info never identifies a server
    if netloc.startswith("["):
        host, _, port = netloc.lower().partition("]")
        host, port = host + "]", port.removeprefix(":")
    else:
        host, colon, port = netloc.rpartition(":")
        if not colon or not port.isdigit():
            host, port = netloc, ""
        host = canonical_host(host)
    return host + (f":{port}" if port and port != _DEFAULT_PORTS.get(scheme) else "")


def canonical_handle(handle: str) -> str:
    """`@Ａｌｉｃｅ＠Bücher.Example ` -> `alice@xn--bcher-kva.example`: the form every account pseudonym is
    taken of."""
    text = unicodedata.normalize("NFKC", unquote(handle.strip(), errors="replace")).strip().lstrip("@")
    user, at, domain = text.partition("@")
    return user.lower() + at + (canonical_host(domain) if at else "")


def _decode_escapes(match: re.Match) -> str:
    """A run of percent-escapes as the characters it encodes (UTF-8), but delimiters and bytes that are not
    UTF-8, which stay escaped (in upper case)."""
    raw = bytes.fromhex(match.group(0).replace("%", ""))
    text = raw.decode("utf-8", errors="surrogateescape")
    return "".join(f"%{ord(ch) - 0xDC00:02X}" if 0xDC80 <= ord(ch) <= 0xDCFF
                   else "".join(f"%{b:02X}" for b in ch.encode()) if ch in _KEPT_ENCODED or not ch.isprintable()
                   else ch for ch in text)


def _canonical_path(path: str) -> str:
    text = unicodedata.normalize("NFKC", _ESCAPES.sub(_decode_escapes, path)) or "/"
    return "".join(ch if ch in _PATH_CHARS else "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
                   for ch in text)


def canonical_url(url: str) -> str:
    """`url` in the canonical form above; a URL that does not parse (a hostile `http://[`) is only stripped."""
    try:
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        netloc = canonical_netloc(parts.netloc, scheme)
    except ValueError:
        return url.strip()
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not TRACKING.match(k)]
    path = _canonical_path(parts.path) if parts.path or netloc else ""
    return urlunsplit((scheme, netloc, path, urlencode(query), ""))


def origin(url: str) -> str:
    """`scheme://host[:port]` of `url`, canonical ("" for a URL that does not parse)."""
    try:
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        return f"{scheme}://{canonical_netloc(parts.netloc, scheme)}"
    except ValueError:
        return ""
