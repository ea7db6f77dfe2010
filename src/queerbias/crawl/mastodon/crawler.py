"""Crawl several instances at once and page each feed back in time, resumably.

Instances run in parallel threads because each has its own rate limit; a failing
instance is reported in stats.json and never stops the others. A feed is paged
newest-first with `max_id` until the `--since` date or its end; the newest id of
a finished pass becomes the `since_id` floor of the next run, so later runs fetch
only what is new (`--refresh` re-checks what is already stored). While a pass is
under way its `max_id` is saved after every page, so a killed crawl resumes where
it stopped.

One Ctrl-C stops the run: workers are told to stop, the store is closed as soon as a
commit in progress has finished (every commit leaves a consistent folder), and
`CrawlInterrupted` is raised for the CLI to report. Requests still in flight are
abandoned with their daemon threads.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from functools import partial
from urllib.parse import urlsplit

from mastodon import MastodonAPIError, MastodonError

from queerbias.crawl.addresses import AddressPolicy, host_port
from queerbias.crawl.canonical import canonical_handle
from queerbias.crawl.keys import CrawlKey
from queerbias.crawl.mastodon.cleaning import BadText, clean_status
from queerbias.crawl.mastodon.client import (
    Caller,
    Refused,
    RequestBudgetExhausted,
    RetriesExhausted,
    RetryPolicy,
    ServerAskedToWait,
    Stopped,
    describe_error,
    make_client,
)
from queerbias.crawl.mastodon.etiquette import is_denied, refusal, written_on_denied
from queerbias.crawl.mastodon.filters import (
    AUTHOR_OPTED_OUT,
    NOT_PUBLIC,
    OPTED_OUT,
    POST_OPTED_OUT,
    SUSPENDED,
    drop_reason,
    opted_out,
)
from queerbias.crawl.mastodon.probe import DISABLED, LOGIN_REQUIRED, NotMastodon, ProbeResult, probe_instance
from queerbias.crawl.mastodon.records import MalformedStatus, Post, account_handle, make_post
from queerbias.crawl.mastodon.settings import LOCAL_FEED, CrawlSettings
from queerbias.crawl.mastodon.store import CrawlStore, StoreError
from queerbias.crawl.mastodon.transport import DisallowedByRobots
from queerbias.errors import QueerbiasError
from queerbias.text.keywords import KeywordMatcher

log = logging.getLogger(__name__)

# Feed and instance states in stats.json besides "complete".
IN_PROGRESS, BUDGET_USED = "in progress", "request budget used up; rerun to continue"
PROBE_FAILED, SKIPPED, RATE_LIMITED, INCOMPLETE = "probe failed", "skipped", "rate limited", "incomplete"
MALFORMED, BAD_TEXT, INSTANCE_DENIED = "malformed", "bad_text", "instance_denied"
ROBOTS_DISALLOWED = "robots_disallowed"
_DENIED = {401: LOGIN_REQUIRED, 403: LOGIN_REQUIRED, 422: LOGIN_REQUIRED, 404: DISABLED}
_PROBE_ERRORS = (MastodonError, RetriesExhausted, RequestBudgetExhausted, Refused, NotMastodon,
                 ServerAskedToWait)


class CrawlInterrupted(QueerbiasError):
    """Ctrl-C: the run stopped; everything committed so far is saved."""


def address_policy(instances: Sequence[str]) -> AddressPolicy:
    """Internal addresses are refused except for the instances the user named (a local test server)."""
    allowed = []
    for url in instances:
        parts = urlsplit(url)
        allowed.append(host_port(parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)))
    return AddressPolicy(allowed)


def run_workers(workers: list, store: CrawlStore, stop: threading.Event, threads: int = 16) -> None:
    """Run every `worker.run` on at most `threads` daemon threads; on Ctrl-C stop them, close the store
    and raise CrawlInterrupted. A write the store refused (disk full) is raised as StoreError."""
    pending = queue.SimpleQueue()
    for worker in workers:
        pending.put(worker)

    def drain() -> None:
        while not stop.is_set():
            try:
                pending.get_nowait().run()
            except queue.Empty:
                return

    pool = [threading.Thread(target=drain, daemon=True, name=f"mastodon-{i}")
            for i in range(min(threads, len(workers)))]
    try:
        for thread in pool:
            thread.start()
        for thread in pool:
            while thread.is_alive():
                thread.join(timeout=0.2)
    except KeyboardInterrupt:
        stop.set()
        store.close()
        raise CrawlInterrupted(f"interrupted; everything committed is saved in {store.dir}; rerun to resume") from None
    if store.failure:
        raise StoreError(store.failure)


class Progress:
    """What a crawl reports while it runs (the CLI shows it); this base class reports nothing."""

    def page(self, fetched: int, kept: int) -> None:
        """A page of a feed was committed: `fetched` statuses looked at, `kept` posts stored."""

    def done(self, url: str, stats: dict) -> None:
        """An instance is finished (crawled, skipped or failed); `stats` is its entry in stats.json."""


def crawl(settings: CrawlSettings, *, policy: RetryPolicy = RetryPolicy(),
          sleep: Callable[[float], None] | None = None, stop: threading.Event | None = None,
          progress: Progress | None = None) -> dict:
    """Crawl every instance of `settings` into `settings.out_dir`; return the content of stats.json."""
    stop = stop or threading.Event()
    key = CrawlKey(settings.key_file, outputs=(settings.out_dir,))
    store = CrawlStore(settings.out_dir, key)
    try:
        matcher = KeywordMatcher(settings.keywords)
        addresses = address_policy(settings.instances)
        workers = [_InstanceCrawler(url, settings, store, matcher, key, policy, stop.wait if sleep is None else sleep,
                                    stop, addresses, progress or Progress())
                   for url in settings.instances]
        run_workers(workers, store, stop)
        store.finalize()
        return store.stats()
    finally:
        store.close()


class _InstanceCrawler:
    """Probe one instance, then crawl its feeds one after another, committing page by page."""

    def __init__(self, url: str, settings: CrawlSettings, store: CrawlStore, matcher: KeywordMatcher,
                 key: CrawlKey, policy: RetryPolicy, sleep: Callable[[float], None], stop: threading.Event,
                 addresses: AddressPolicy, progress: Progress):
        self.url, self.settings, self.store, self.matcher, self.key = url, settings, store, matcher, key
        self.policy, self.sleep, self.stop, self.addresses = policy, sleep, stop, addresses
        self.progress = progress
        self.seen_as = urlsplit(url).netloc
        self.relevant_tags = frozenset(settings.tags)
        self.caller: Caller | None = None
        self._requests_reported = 0
        # Refusals overridden by --allow-instance, in this run and before (for stats.json and the datasheet).
        self.admin_agreed: set[str] = set(store.stats()["instances"].get(url, {}).get("admin_agreed") or [])

    def _commit(self, posts: Sequence[Post] = (), stats: Counter | None = None, **kwargs) -> None:
        """Save through the store, adding the requests made since the last commit."""
        stats = Counter(stats or {})
        if self.caller is not None:
            stats["requests"] += self.caller.requests - self._requests_reported
            self._requests_reported = self.caller.requests
        self.store.commit(self.url, self.seen_as, list(posts), stats=stats, **kwargs)

    def run(self) -> None:
        """Never raises: whatever goes wrong ends up as this instance's `status` in stats.json."""
        try:
            self._run()
        except (Stopped, StoreError):
            return  # being stopped, or the store refused a write: the main thread reports it
        except Exception as err:  # a bug or odd data must not take the other instances down
            log.exception("%s: unexpected error", self.url)
            try:
                self._commit(status=f"failed: {describe_error(err)}")
            except StoreError:
                return
        self.progress.done(self.url, self.store.stats()["instances"][self.url])

    def _run(self) -> None:
        if is_denied(self.seen_as, self.settings.deny_list):
            self._commit(status=f"{SKIPPED}: on the instance deny-list")
            log.warning("%s: skipped: on the instance deny-list", self.url)
            return
        token = self.settings.token_for(self.url)
        self.caller = Caller(make_client(self.url, user_agent=self.settings.user_agent, token=token,
                                         policy=self.addresses, timeout=self.settings.request_timeout),
                             max_requests=self.settings.max_requests, policy=self.policy, sleep=self.sleep,
                             stop=self.stop)
        try:
            probe = probe_instance(self.caller)
        except _PROBE_ERRORS as err:
            log.warning("%s: probe failed: %s", self.url, describe_error(err))
            self._commit(status=f"{PROBE_FAILED}: {describe_error(err)}")
            return
        why = refusal(probe)
        if why and not self.settings.allowed(self.url):
            log.warning("%s: skipped: %s", self.url, why)
            self._commit(probe=probe.as_dict(), status=f"{SKIPPED}: {why}; crawl it only with --allow-instance "
                                                       "if its admin agreed")
            return
        self._commit(probe=probe.as_dict(), status=IN_PROGRESS)
        if why:
            self._agree(why)
        self.caller.api.session.robots = partial(self._robots_refusal, probe)
        status, failed = "complete", 0
        feeds = self.settings.feeds()
        for feed in feeds:
            try:
                state = self._crawl_feed(feed, probe)
            except RequestBudgetExhausted:
                status = BUDGET_USED
                break
            except ServerAskedToWait as err:
                status = f"{RATE_LIMITED}: {err}"
                break
            except (MastodonError, RetriesExhausted, Refused) as err:
                state = f"failed: {describe_error(err)}"
                failed += 1
            self._commit(feeds={feed: state})
            if state != "complete":
                log.warning("%s %s: %s", self.url, feed, state)
        if failed and status == "complete":  # a feed that kept failing (429 forever, say) is not done
            status = f"{INCOMPLETE}: {failed} of {len(feeds)} feeds failed; rerun to try them again"
        self._commit(status=status)
        totals = self.store.stats()["instances"][self.url]
        log.info("%s: %s; %d requests, %d fetched, %d kept so far", self.url, status, totals["requests"],
                 totals["fetched"], totals["kept"])

    def _feed_method(self, feed: str):
        api = self.caller.api
        if feed == LOCAL_FEED:
            return api.timeline_local
        return partial(api.timeline_hashtag, feed.removeprefix("tag:"))

    def _agree(self, why: str) -> None:
        """Record, before anything is crawled under it, a refusal that --allow-instance overrides."""
        if why not in self.admin_agreed:
            self.admin_agreed.add(why)
            self._commit(admin_agreed=sorted(self.admin_agreed))

    def _robots_refusal(self, probe: ProbeResult, url: str) -> str | None:
        """Why robots.txt keeps us from a request's `url` (path and query), unless its admin agreed; asked for
        every request the session is about to send."""
        why = probe.robots_refusal(url)
        if why and self.settings.allowed(self.url):
            self._agree(why)
            return None
        return why

    def _crawl_feed(self, feed: str, probe: ProbeResult) -> str:
        """Page one feed until the cut-off or its end; return its state for stats.json."""
        access = probe.live_feeds if feed == LOCAL_FEED else probe.hashtag_feeds
        if access == DISABLED:
            return access
        if access == LOGIN_REQUIRED and not (self.settings.token_for(self.url) and self.settings.allowed(self.url)):
            return access  # the admin made it login-only: a token alone is no permission
        if access == LOGIN_REQUIRED:
            self._agree("login-only feeds, read with a token")
        fetch = self._feed_method(feed)
        cursor = self.store.cursor(self.url, feed)
        floor, top, max_id = cursor.get("newest_id"), cursor.get("pass_top_id"), cursor.get("pass_max_id")
        while True:
            try:
                page = self.caller.call(fetch, max_id=max_id, since_id=floor, limit=self.settings.page_size)
            except DisallowedByRobots:
                return ROBOTS_DISALLOWED
            except MastodonAPIError as err:
                code = err.args[1] if len(err.args) > 1 else None
                if code in _DENIED:  # login-only or switched off, although the probe could not tell
                    return _DENIED[code]
                raise
            if not isinstance(page, list):
                return "failed: the feed did not answer with a list of statuses"
            posts, fetched, dropped, reached_since, withdrawn = self._process(page, probe.domain)
            next_page = getattr(page, "_pagination_next", None)
            top = top or _first_id(page)
            finished = reached_since or not page or not next_page or "max_id" not in next_page
            if finished:
                cursor = {"newest_id": top or floor}
            else:
                max_id = str(next_page["max_id"])
                cursor = {"newest_id": floor, "pass_top_id": top, "pass_max_id": max_id}
            if withdrawn.accounts or withdrawn.posts:  # an opt-out seen is an opt-out applied, at once
                self.store.withdraw(withdrawn.accounts, withdrawn.posts)
            self._commit(posts, stats=Counter(fetched=fetched), dropped=dropped, feed=feed, cursor=cursor,
                         feeds={feed: "complete" if finished else IN_PROGRESS})
            self.progress.page(fetched, len(posts))
            if finished:
                return "complete"

    def _process(self, page, local_domain: str | None) -> tuple[list[Post], int, Counter, bool, _Withdrawn]:
        """Posts to keep, statuses looked at, drop reasons, whether the `--since` date was passed, and the
        opt-outs seen (authors and posts whose stored copies must go)."""
        posts, dropped, fetched, withdrawn = [], Counter(), 0, _Withdrawn()
        now = datetime.now(timezone.utc)
        for status in page:
            try:
                if self.settings.since and status["created_at"] < self.settings.since:
                    return posts, fetched, dropped, True, withdrawn  # pages are newest first
                fetched += 1
                original = status.get("reblog") or status
                if written_on_denied(str(original.get("uri") or ""), account_handle(original, local_domain),
                                     self.settings.deny_list):
                    dropped[INSTANCE_DENIED] += 1
                    continue
                cleaned = clean_status(original, self.matcher, self.relevant_tags)
                reason = drop_reason(original, cleaned.text, self.matcher, self.settings.accept_missing_indexable)
                if reason:
                    dropped[reason] += 1
                    if reason in (NOT_PUBLIC, OPTED_OUT, SUSPENDED):
                        withdrawn.note(original, reason, self.key, local_domain, self.settings.accept_missing_indexable)
                    continue
                posts.append(make_post(original, cleaned, key=self.key, matcher=self.matcher, instance=self.url,
                                       local_domain=local_domain, now=now))
            except BadText:
                dropped[BAD_TEXT] += 1  # a lone surrogate: skipped, never fatal for the instance
            except (MalformedStatus, KeyError, TypeError, ValueError, AttributeError):
                dropped[MALFORMED] += 1  # one odd status must not stop its feed on every run
        return posts, fetched, dropped, False, withdrawn


class _Withdrawn:
    """Opt-outs a page showed: authors (and the accounts they moved to) and posts whose stored copies go."""

    def __init__(self):
        self.accounts: dict[str, str] = {}
        self.posts: dict[str, str] = {}

    def note(self, status, reason: str, key: CrawlKey, local_domain: str | None, accept_missing: bool) -> None:
        account = status.get("account") or {}
        if reason == NOT_PUBLIC:
            self.posts[key.post_pseudonym(str(status["uri"]))] = NOT_PUBLIC
        elif reason == SUSPENDED or opted_out(account, accept_missing):
            for handle in _handles(status, local_domain):
                self.accounts[key.account_pseudonym(handle)] = SUSPENDED if reason == SUSPENDED else AUTHOR_OPTED_OUT
        else:
            self.posts[key.post_pseudonym(str(status["uri"]))] = POST_OPTED_OUT


def _handles(status, local_domain: str | None) -> list[str]:
    """The author's `user@domain`, and those of the accounts they moved to (as far as `opted_out` follows)."""
    handles = [account_handle(status, local_domain)]
    moved = (status.get("account") or {}).get("moved")
    for _ in range(3):
        if not isinstance(moved, dict) or not moved.get("acct"):
            break
        acct = str(moved["acct"])
        handles.append(canonical_handle(acct if "@" in acct else f"{acct}@{local_domain or ''}"))
        moved = moved.get("moved")
    return handles


def _first_id(page) -> str | None:
    for status in page:
        try:
            return str(status["id"])
        except (KeyError, TypeError):
            continue
    return None
