"""Page-level reservations against AI training and text and data mining.

Besides robots.txt, sites say "not for AI" in three more places, and each is honoured:

- `noai` / `noimageai` in an `X-Robots-Tag` header or a `<meta name="robots">` tag (or a
  meta tag named after our agent or an AI-training crawler);
- `noindex` (or `none`) addressed to our agent by name: `<meta name="queerbias-news"
  content="noindex">`, or `X-Robots-Tag: queerbias-news: noindex` (a bare `noindex` is for
  search engines, and is not read as addressed to us);
- the W3C TDM Reservation Protocol (TDMRep): a `tdm-reservation: 1` header, a
  `<meta name="tdm-reservation" content="1">` tag, or a rule in the origin's
  `/.well-known/tdmrep.json` whose `location` covers the page's address. TDMRep makes a
  location a robots.txt path pattern: a prefix, with `*` and a final `$` (`/` reserves the
  whole site, `/artikel/` everything below it). RFC 9309 (section 2.2.2) matches such a
  pattern against the path with its query, so `/index.php?artikel=*` reserves the articles
  a script serves. The first rule that covers the address decides.

The well-known file is fetched once per origin, like robots.txt; a missing file, or one
that is not JSON at all (a web page), reserves nothing. A file too deeply nested to parse
(a hostile one) leaves the site's wishes unknown: its pages are skipped, with one line.
"""

from __future__ import annotations

import json
import logging
import re
import urllib.parse

from lxml import etree
from lxml import html as lxml_html

from queerbias.crawl.agent import AI_TRAINING_AGENTS, our_agents
from queerbias.crawl.canonical import origin as origin_of
from queerbias.crawl.news.feeds import normalise_link
from queerbias.crawl.news.http import Fetcher, FetchError, Response
from queerbias.crawl.robots import pattern_covers

log = logging.getLogger(__name__)
AI_OPT_OUT, TDM_RESERVED, TDMREP_UNREADABLE, NOINDEX = "ai_opt_out", "tdm_reserved", "tdmrep_unreadable", "noindex"
_NOAI = {"noai", "noimageai"}
_NOINDEX = {"noindex", "none"}
# `X-Robots-Tag: agent: directives`; a value that starts with a directive taking a value is not agent-prefixed.
_AGENT_PREFIX = re.compile(r"^\s*([A-Za-z0-9_\-]+)\s*:\s*(.*)$", re.DOTALL)
_VALUED_DIRECTIVES = {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
_PARSER = lxml_html.HTMLParser(no_network=True, huge_tree=False, remove_comments=True)


def _directives(value: str) -> set[str]:
    """`noai, noimageai` or `GPTBot: noai` -> {"noai", "noimageai"} (an agent prefix is dropped)."""
    return {part.rsplit(":", 1)[-1].strip().lower() for part in value.split(",") if part.strip()}


def _addressed_to(value: str) -> str | None:
    """The agent an `X-Robots-Tag` value names first (`queerbias-news: noindex` -> `queerbias-news`), or None."""
    match = _AGENT_PREFIX.match(value)
    if not match or match.group(1).lower() in _VALUED_DIRECTIVES:
        return None
    return match.group(1).lower()


def _parse(body: bytes):
    try:
        return lxml_html.document_fromstring(body, parser=_PARSER)
    except (etree.ParserError, ValueError):
        return None


def _meta(body: bytes) -> list[tuple[str, str]]:
    """(name, content) of the page's meta tags, lower-case names; [] if the page does not parse."""
    root = _parse(body)
    return [] if root is None else [((m.get("name") or "").strip().lower(), m.get("content") or "")
                                    for m in root.iter("meta")]


def canonical_link(response: Response) -> str | None:
    """The page's `<link rel="canonical">`, normalised (`feeds.normalise_link`), when it lies on the page's own
    origin: a page may name its own address, not speak for another site's pages."""
    root = _parse(response.body)
    for link in root.iter("link") if root is not None else ():
        if "canonical" in (link.get("rel") or "").lower().split() and link.get("href"):
            try:
                canonical = normalise_link(link.get("href"), response.url)
            except ValueError:  # an address that does not parse names nothing
                return None
            return canonical if origin_of(canonical) == origin_of(response.url) else None
    return None


class OptOuts:
    """Decides, per fetched page, whether its site reserved it against AI training or TDM."""

    def __init__(self, fetcher: Fetcher):
        self.fetcher = fetcher
        self._ours = set(our_agents(fetcher.user_agent))
        self._names = {"robots", *self._ours, *(a.lower() for a in AI_TRAINING_AGENTS)}
        self._tdmrep: dict[str, list[dict] | FetchError] = {}

    def page_reservation(self, response: Response) -> str | None:
        """AI_OPT_OUT, NOINDEX or TDM_RESERVED when the fetched page's headers or meta tags reserve it, else None."""
        headers = response.headers
        for value in (headers.get_all("X-Robots-Tag") or []) if headers else []:
            if _directives(value) & _NOAI:
                return AI_OPT_OUT
            if _addressed_to(value) in self._ours and _directives(value) & _NOINDEX:
                return NOINDEX
        if headers and str(headers.get("tdm-reservation", "")).strip() == "1":
            return TDM_RESERVED
        for name, content in _meta(response.body):
            if name in self._names and _directives(content) & _NOAI:
                return AI_OPT_OUT
            if name in self._ours and _directives(content) & _NOINDEX:
                return NOINDEX
            if name == "tdm-reservation" and content.strip() == "1":
                return TDM_RESERVED
        return None

    def origin_reserves(self, url: str) -> bool:
        """Whether the origin's /.well-known/tdmrep.json reserves `url` (asked before fetching the page);
        FetchError (outcome TDMREP_UNREADABLE) when the file cannot be parsed safely."""
        parts = urllib.parse.urlsplit(url)
        origin = origin_of(url)
        if origin not in self._tdmrep:
            self._tdmrep[origin] = self._load(origin)
        rules = self._tdmrep[origin]
        if isinstance(rules, FetchError):
            raise rules
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")  # matched as robots.txt matches
        for rule in rules:
            if pattern_covers(str(rule.get("location", "")), path):
                return str(rule.get("tdm-reservation")) == "1"
        return False

    def _load(self, origin: str) -> list[dict] | FetchError:
        url = origin + "/.well-known/tdmrep.json"
        try:
            response = self.fetcher.get(url, accept="application/json")
            rules = json.loads(response.body)
        except (FetchError, ValueError):
            return []
        except RecursionError:
            log.warning("%s: nested too deeply to read; the site's pages are skipped", url)
            return FetchError(url, "nested too deeply to read", retry=False, outcome=TDMREP_UNREADABLE)
        return [rule for rule in rules if isinstance(rule, dict)] if isinstance(rules, list) else []
