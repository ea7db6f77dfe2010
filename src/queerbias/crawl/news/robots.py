"""robots.txt: sites that ask crawlers, or AI-training crawlers in particular, to stay away are respected.

Follows RFC 9309 (parsed and matched by `queerbias.crawl.robots`): the file is fetched
once per origin and run through our own Fetcher (same limits as any page); a 4xx answer
means there are no rules; a 5xx answer or a network failure means the site's wishes are
unknown, so its pages are left for a later run (FetchError with retry=True) rather than
crawled or given up.

Our texts train language models, so a page is fetched only if every group that speaks
for such a crawler allows it: our own agent (the User-Agent's token, and `queerbias-news`
and `queerbias-crawler` whatever `--user-agent` says), and the groups site owners use to
opt out of AI training (`agent.AI_TRAINING_AGENTS`: GPTBot, CCBot, ...). The longest `Crawl-delay` among those
groups spaces our requests to the host; a delay longer than `MAX_CRAWL_DELAY` means
the site does not want a crawler like ours, and its pages are skipped.
"""

from __future__ import annotations

import urllib.parse

from queerbias.crawl.agent import AI_TRAINING_AGENTS, our_agents
from queerbias.crawl.canonical import origin as origin_of
from queerbias.crawl.news.http import Fetcher, FetchError
from queerbias.crawl.robots import RobotsRules

MAX_CRAWL_DELAY = 60.0


class CrawlDelayTooLong(Exception):
    """The site's Crawl-delay is longer than we can honour in one run."""


class RobotsPolicy:
    """Caches one parsed robots.txt (or the failure to get one) per origin for a run."""

    def __init__(self, fetcher: Fetcher):
        self.fetcher = fetcher
        self.agents = (*our_agents(fetcher.user_agent), *AI_TRAINING_AGENTS)
        self._rules: dict[str, RobotsRules | FetchError] = {}

    def allowed(self, url: str) -> bool:
        """Whether our agent and the AI-training agents may fetch `url`; FetchError if robots.txt is
        unreachable, CrawlDelayTooLong if the site asks for more patience than a run has."""
        parts = urllib.parse.urlsplit(url)
        origin = origin_of(url)
        if origin not in self._rules:
            self._rules[origin] = self._load(origin, parts.hostname or "")
        rules = self._rules[origin]
        if isinstance(rules, FetchError):
            raise rules
        delay = max((rules.crawl_delay(agent) for agent in self.agents), default=0.0)
        if delay > MAX_CRAWL_DELAY:
            raise CrawlDelayTooLong(f"{origin} asks for a Crawl-delay of {delay:.0f} s")
        return all(rules.allowed(agent, url) for agent in self.agents)

    def _load(self, origin: str, host: str) -> RobotsRules | FetchError:
        try:
            response = self.fetcher.get(origin + "/robots.txt", accept="text/plain")
        except FetchError as err:
            if err.outcome:  # an internal address, or a host that asked us to wait: say so, not "unreachable"
                return err
            if err.status is not None and 400 <= err.status < 500 and err.status != 429:
                return RobotsRules("")
            return FetchError(origin + "/robots.txt", f"robots.txt unreachable ({err})")
        rules = RobotsRules.from_bytes(response.body, response.charset)
        delay = max((rules.crawl_delay(agent) for agent in self.agents), default=0.0)
        if delay:
            self.fetcher.set_host_delay(host, delay)
        return rules
