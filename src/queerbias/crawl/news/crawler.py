"""Crawl news feeds into keyword-filtered documents, resumably.

For every feed (itself checked against robots.txt) and every item not seen before:
check robots.txt and the site's TDM reservation, fetch the linked page (a redirect is
followed only after the same two checks for its target, which may be another site), skip it if its
headers or meta tags reserve it against AI training, extract the article text
(personal data scrubbed), keep it if an LGBTQ+ keyword matches title or text, append
it to the output JSONL (written, fsynced), then record the item in the state file.
Items are identified by feed and guid, and by link (tracking parameters removed) and the
page's canonical address, so the same article in two feeds, behind campaign links, or
re-published under a new guid, is fetched once, while two sites that both number their items
"1" keep both articles. The output folder is private (0700,
files 0600) and locked while a crawl writes to it.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import IO

from tqdm import tqdm

from queerbias.crawl.documents import Document, stable_id
from queerbias.crawl.folder import FolderLock, make_private_dir, open_private_append, write_all
from queerbias.crawl.news.extract import HTML_TYPES, extract_article
from queerbias.crawl.news.feeds import FeedItem, guid_key, normalise_link, parse_feed
from queerbias.crawl.news.http import Fetcher, FetchError, Response
from queerbias.crawl.news.optout import TDM_RESERVED, OptOuts, canonical_link
from queerbias.crawl.news.robots import CrawlDelayTooLong, RobotsPolicy
from queerbias.crawl.news.state import CrawlState
from queerbias.errors import DataError
from queerbias.fileio import dumps_line, iter_jsonl, regular_file
from queerbias.text.keywords import KeywordMatcher
from queerbias.text.scrub import scrub_personal_data

log = logging.getLogger(__name__)

FEED_ACCEPT = "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.8"
PAGE_ACCEPT = "text/html, application/xhtml+xml;q=0.9"
RETRY_LATER = frozenset({"retry_later", "host_backoff"})  # outcomes a later run tries again


def recover_output(path: Path) -> list[str]:
    """Seen-keys of the records already in `path`, after cutting off a torn last line.

    A crash while appending can leave half a line; it is truncated so that the next
    record starts on a fresh line (the item is then simply crawled again).
    """
    if not path.exists():
        return []
    with open(regular_file(path, "news output"), "rb+") as handle:  # a FIFO would block open() for ever
        data = handle.read()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            log.warning("%s: dropping an incomplete last record (%d bytes)", path, len(data) - cut)
            handle.truncate(cut)
    keys = []
    for _, record in iter_jsonl(path):
        provenance = record.get("provenance") or {}
        if provenance.get("guid") and provenance.get("feed"):
            keys.append(guid_key(provenance["feed"], provenance["guid"]))
        keys += [f"link:{normalise_link(link, link)}" for link in (provenance.get("link"), record.get("url")) if link]
    return keys


class NewsCrawler:
    """One crawl over a list of feeds; `counts` says what happened to every item."""

    def __init__(self, fetcher: Fetcher, matcher: KeywordMatcher, output: Path, state_path: Path,
                 respect_robots: bool = True, max_items_per_feed: int | None = None):
        self.fetcher, self.matcher = fetcher, matcher
        self.output, self.state_path = Path(output), Path(state_path)
        self.robots = RobotsPolicy(fetcher) if respect_robots else None
        self.opt_outs = OptOuts(fetcher)
        self.max_items_per_feed = max_items_per_feed
        self.counts: Counter[str] = Counter()
        self.failed_feeds: dict[str, str] = {}

    def run(self, feeds: list[str]) -> Counter[str]:
        folder = make_private_dir(self.output.parent)
        lock = FolderLock(folder, "crawl news")
        try:
            state = CrawlState(self.state_path)
            state.mark(recover_output(self.output))
            with open_private_append(self.output) as out:
                for feed in tqdm(feeds, unit="feed", desc="news", leave=False):
                    self._crawl_feed(feed, state, out)
        finally:
            lock.release()
        return self.counts

    def _crawl_feed(self, feed: str, state: CrawlState, out: IO[bytes]) -> None:
        try:
            if self.robots is not None and not self.robots.allowed(feed):
                raise FetchError(feed, "robots.txt disallows this feed for our agent or AI-training crawlers",
                                 retry=False)
            response = self.fetcher.get(feed, accept=FEED_ACCEPT, before_redirect=self._check_robots)
            items = parse_feed(response.body, response.url)
        except (FetchError, DataError, CrawlDelayTooLong) as err:
            log.error("feed %s", err)
            self.failed_feeds[feed] = str(err)
            return
        self.counts["feeds"] += 1
        for item in items[: self.max_items_per_feed]:
            self.counts[self._handle(item, feed, state, out)] += 1

    def _handle(self, item: FeedItem, feed: str, state: CrawlState, out: IO[bytes]) -> str:
        """Process one item and return its outcome (a counter name)."""
        keys = item.keys(feed)
        if state.is_seen(keys):
            return "duplicate"
        outcome, document = self._document(item, feed, state)
        if outcome in RETRY_LATER:
            return outcome  # not marked: the next run tries again
        if document is not None:
            write_all(out, dumps_line(document.to_dict()).encode("utf-8"))
            os.fsync(out.fileno())
            keys.append(f"link:{document.url}")
        state.mark(keys)
        state.save()
        return outcome

    def _check_robots(self, url: str) -> None:
        """FetchError (outcome robots_disallowed) unless robots.txt lets us and the AI-training crawlers fetch `url`."""
        if self.robots is not None and not self.robots.allowed(url):
            raise FetchError(url, "robots.txt disallows this address for our agent or AI-training crawlers",
                             retry=False, outcome="robots_disallowed")

    def _check_page(self, url: str) -> None:
        """`_check_robots`, then FetchError (outcome tdm_reserved) if the site's tdmrep.json reserves `url`."""
        self._check_robots(url)
        if self.opt_outs.origin_reserves(url):
            raise FetchError(url, "the site reserves this address against text and data mining", retry=False,
                             outcome=TDM_RESERVED)

    def _fetch_page(self, item: FeedItem) -> Response:
        """The page of `item`, asked for without tracking parameters. A site that answers that with 404 or 410
        is asked for the address its feed gave, since some serve only the address they published, and a
        permanent failure is never retried. Each address is checked first (`_check_page`)."""
        first, *rest = dict.fromkeys((item.link, item.address))
        try:
            return self._get_page(first)
        except FetchError as err:
            if not rest or err.status not in (404, 410):
                raise
        return self._get_page(rest[0])

    def _get_page(self, address: str) -> Response:
        self._check_page(address)
        return self.fetcher.get(address, accept=PAGE_ACCEPT, before_redirect=self._check_page)

    def _document(self, item: FeedItem, feed: str, state: CrawlState) -> tuple[str, Document | None]:
        if not item.link:
            return "no_link", None
        try:
            response = self._fetch_page(item)
        except CrawlDelayTooLong:
            return "crawl_delay_too_long", None
        except FetchError as err:
            log.warning("article %s", err)
            return (err.outcome or ("retry_later" if err.retry else "fetch_failed")), None
        if response.content_type not in HTML_TYPES:
            return "not_html", None
        reserved = self.opt_outs.page_reservation(response)
        if reserved:
            return reserved, None
        url = canonical_link(response) or normalise_link(response.url, item.link)
        if url != item.link and state.is_seen([f"link:{url}"]):
            return "duplicate", None
        text = extract_article(response.body, response.url)
        if text is None:
            return "no_text", None
        text = scrub_personal_data(text)
        keywords = self.matcher.find(f"{item.title}\n{text}")
        if not keywords:
            return "no_keyword", None
        return "kept", Document(
            doc_id="news:" + (stable_id(normalise_link(feed, feed), item.guid) if item.guid else stable_id(item.link)),
            source="news", kind="article", text=text, title=scrub_personal_data(item.title) or None, url=url,
            published=item.published, language=item.language, keywords=keywords,
            provenance={"feed": feed, "guid": item.guid, "link": item.link,
                        "fetched_at": datetime.now(timezone.utc).isoformat(timespec="seconds")},
        )
