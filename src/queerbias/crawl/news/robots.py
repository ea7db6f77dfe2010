"""robots.txt: sites that ask crawlers to stay away from article pages are respected.

Follows RFC 9309: the file is fetched once per origin and run through our own
Fetcher (same limits as any page); a 4xx answer means there are no rules; a 5xx
answer or a network failure means the site's wishes are unknown, so its pages are
left for a later run (FetchError with retry=True) rather than crawled or given up.
"""

from __future__ import annotations

import urllib.parse
import urllib.robotparser

from queerbias.crawl.news.http import Fetcher, FetchError


class RobotsPolicy:
    """Caches one parsed robots.txt (or the failure to get one) per origin for a run."""

    def __init__(self, fetcher: Fetcher):
        self.fetcher = fetcher
        self._rules: dict[str, urllib.robotparser.RobotFileParser | FetchError] = {}

    def allowed(self, url: str) -> bool:
        """Whether our User-Agent may fetch `url`; FetchError if robots.txt is unreachable."""
        parts = urllib.parse.urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in self._rules:
            self._rules[origin] = self._load(origin)
        rules = self._rules[origin]
        if isinstance(rules, FetchError):
            raise rules
        return rules.can_fetch(self.fetcher.user_agent, url)

    def _load(self, origin: str) -> urllib.robotparser.RobotFileParser | FetchError:
        parser = urllib.robotparser.RobotFileParser(origin + "/robots.txt")
        try:
            response = self.fetcher.get(origin + "/robots.txt", accept="text/plain")
        except FetchError as err:
            if err.status is not None and 400 <= err.status < 500:
                parser.allow_all = True
                return parser
            return FetchError(origin + "/robots.txt", f"robots.txt unreachable ({err})")
        parser.parse(response.body.decode(response.charset or "utf-8", errors="replace").splitlines())
        return parser
