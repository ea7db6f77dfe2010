"""Crawl several instances at once and page each feed back in time, resumably.

Instances run in parallel threads because each has its own rate limit; a failing
instance is reported in stats.json and never stops the others. A feed is paged
newest-first with `max_id` until the `--since` date or its end; the newest id of
a finished pass becomes the `since_id` floor of the next run, so later runs fetch
only what is new. While a pass is under way its `max_id` is saved after every
page, so a killed crawl resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from urllib.parse import urlsplit

from mastodon import MastodonAPIError, MastodonError

from queerbias.crawl.mastodon.cleaning import clean_post_html
from queerbias.crawl.mastodon.client import (
    Caller,
    RequestBudgetExhausted,
    RetriesExhausted,
    RetryPolicy,
    describe_error,
    make_client,
)
from queerbias.crawl.mastodon.filters import drop_reason
from queerbias.crawl.mastodon.probe import (
    DISABLED,
    LOGIN_REQUIRED,
    ProbeResult,
    probe_instance,
)
from queerbias.crawl.mastodon.settings import LOCAL_FEED, CrawlSettings
from queerbias.crawl.mastodon.store import SALT, CrawlStore, Pseudonymiser
from queerbias.text.keywords import KeywordMatcher
from queerbias.text.language import detect_language

log = logging.getLogger(__name__)

# Feed and instance states in stats.json besides "complete".
IN_PROGRESS, BUDGET_USED = "in progress", "request budget used up; rerun to continue"
PROBE_FAILED = "probe failed"
_DENIED = {401: LOGIN_REQUIRED, 403: LOGIN_REQUIRED, 422: LOGIN_REQUIRED, 404: DISABLED}


def crawl(settings: CrawlSettings, *, policy: RetryPolicy = RetryPolicy(),
          sleep: Callable[[float], None] = time.sleep) -> dict:
    """Crawl every instance of `settings` into `settings.out_dir`; return the content of stats.json."""
    store = CrawlStore(settings.out_dir)
    try:
        pseudonymise = Pseudonymiser(settings.salt_file or settings.out_dir / SALT)
        matcher = KeywordMatcher(settings.keywords)
        workers = [_InstanceCrawler(url, settings, store, matcher, pseudonymise, policy, sleep)
                   for url in settings.instances]
        with ThreadPoolExecutor(max_workers=min(16, len(workers)), thread_name_prefix="mastodon") as pool:
            for future in [pool.submit(worker.run) for worker in workers]:
                future.result()
        store.finalize()
        return store.stats()
    finally:
        store.close()


def _doc_id(uri: str) -> str:
    return "mastodon:" + hashlib.sha256(uri.encode()).hexdigest()[:20]


class _InstanceCrawler:
    """Probe one instance, then crawl its feeds one after another, committing page by page."""

    def __init__(self, url: str, settings: CrawlSettings, store: CrawlStore, matcher: KeywordMatcher,
                 pseudonymise: Pseudonymiser, policy: RetryPolicy, sleep: Callable[[float], None]):
        self.url, self.settings, self.store, self.matcher = url, settings, store, matcher
        self.pseudonymise, self.policy, self.sleep = pseudonymise, policy, sleep
        self.seen_as = urlsplit(url).netloc
        self.relevant_tags = frozenset(settings.tags)
        self._requests_reported = 0

    def _commit(self, records=(), stats: Counter | None = None, **kwargs) -> None:
        """Save through the store, adding the requests made since the last commit."""
        stats = Counter(stats or {})
        stats["requests"] += self.caller.requests - self._requests_reported
        self._requests_reported = self.caller.requests
        self.store.commit(self.url, self.seen_as, list(records), stats=stats, **kwargs)

    def run(self) -> None:
        """Never raises: whatever goes wrong ends up as this instance's `status` in stats.json."""
        token = self.settings.token_for(self.url)
        self.caller = Caller(make_client(self.url, user_agent=self.settings.user_agent, token=token),
                             max_requests=self.settings.max_requests, policy=self.policy, sleep=self.sleep)
        try:
            probe = probe_instance(self.caller)
        except (MastodonError, RetriesExhausted, RequestBudgetExhausted) as err:
            log.warning("%s: probe failed: %s", self.url, describe_error(err))
            self._commit(status=f"{PROBE_FAILED}: {describe_error(err)}")
            return
        self._commit(probe=probe.as_dict(), status=IN_PROGRESS)
        status = "complete"
        for feed in self.settings.feeds():
            try:
                state = self._crawl_feed(feed, probe)
            except RequestBudgetExhausted:
                status = BUDGET_USED
                break
            except (MastodonError, RetriesExhausted) as err:
                state = f"failed: {describe_error(err)}"
            except Exception as err:  # a bug or odd data must not take the other instances down
                log.exception("%s %s: unexpected error", self.url, feed)
                state = f"failed: {describe_error(err)}"
            self._commit(feeds={feed: state})
            if state != "complete":
                log.warning("%s %s: %s", self.url, feed, state)
        self._commit(status=status)
        totals = self.store.stats()["instances"][self.url]
        log.info("%s: %s; %d requests, %d fetched, %d kept so far", self.url, status, totals["requests"],
                 totals["fetched"], totals["kept"])

    def _feed_method(self, feed: str):
        api = self.caller.api
        if feed == LOCAL_FEED:
            return api.timeline_local
        return partial(api.timeline_hashtag, feed.removeprefix("tag:"))

    def _crawl_feed(self, feed: str, probe: ProbeResult) -> str:
        """Page one feed until the cut-off or its end; return its state for stats.json."""
        access = probe.live_feeds if feed == LOCAL_FEED else probe.hashtag_feeds
        if access in (LOGIN_REQUIRED, DISABLED):
            return access
        fetch = self._feed_method(feed)
        cursor = self.store.cursor(self.url, feed)
        floor, top, max_id = cursor.get("newest_id"), cursor.get("pass_top_id"), cursor.get("pass_max_id")
        while True:
            try:
                page = self.caller.call(fetch, max_id=max_id, since_id=floor, limit=self.settings.page_size)
            except MastodonAPIError as err:
                code = err.args[1] if len(err.args) > 1 else None
                if code in _DENIED:  # login-only or switched off, although the probe could not tell
                    return _DENIED[code]
                raise
            records, fetched, dropped, reached_since = self._process(page)
            next_page = getattr(page, "_pagination_next", None)
            top = top or (str(page[0]["id"]) if page else None)
            finished = reached_since or not page or not next_page
            if finished:
                cursor = {"newest_id": top or floor}
            else:
                max_id = str(next_page["max_id"])
                cursor = {"newest_id": floor, "pass_top_id": top, "pass_max_id": max_id}
            self._commit(records, stats=Counter(fetched=fetched), dropped=dropped, feed=feed, cursor=cursor,
                         feeds={feed: "complete" if finished else IN_PROGRESS})
            if finished:
                return "complete"

    def _process(self, page) -> tuple[list[dict], int, Counter, bool]:
        """Records to keep, posts looked at, drop reasons, and whether the `--since` date was passed."""
        records, dropped, fetched = [], Counter(), 0
        for status in page:
            if self.settings.since and status["created_at"] < self.settings.since:
                return records, fetched, dropped, True  # pages are newest first
            fetched += 1
            original = status.get("reblog") or status
            text = clean_post_html(original.get("content") or "", self.matcher, self.relevant_tags)
            reason = drop_reason(original, text, self.matcher)
            if reason:
                dropped[reason] += 1
            else:
                records.append(self._record(original, text))
        return records, fetched, dropped, False

    def _record(self, status, text: str) -> dict:
        """One posts.jsonl line; the author appears only as a salted hash (`seen_on` is set by the store)."""
        account = status.get("account") or {}
        acct = account.get("acct") or ""
        if "@" not in acct:  # local accounts come without their domain
            acct = f"{acct}@{urlsplit(account.get('url') or status['uri']).netloc}"
        return {
            "doc_id": _doc_id(status["uri"]),
            "uri": status["uri"],
            "url": status.get("url") or status["uri"],
            "origin_instance": urlsplit(status["uri"]).netloc,
            "created_at": status["created_at"].isoformat(),
            "language": status.get("language") or detect_language(text)[0],
            "text": text,
            "tags": sorted({t["name"].lower() for t in status.get("tags") or []}),
            "keywords": self.matcher.find(text),
            "account": self.pseudonymise(acct),
        }
