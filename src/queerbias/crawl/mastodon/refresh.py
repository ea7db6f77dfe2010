"""`crawl mastodon --refresh`: check every stored post against its origin, and honour what changed.

A post deleted upstream, or an author who opted out after we stored their posts, must
leave the corpus too. A refresh pass asks, for every stored post, the server the post was
written on (`GET /api/v1/statuses/:id` there, the id taken from the uri or from when we
saw it there), or failing that a crawled instance that showed it:

    404 / 410                      deleted: the post is removed
    author opted out (any signal)  all of that author's posts are removed
    no longer public               removed
    edited                         replaced by the new text, or removed if it no longer passes the filters
    anything else                  unchanged, or unchecked (error, login needed): kept and asked again next pass

A server that showed a copy answers only when the origin cannot be asked (its id there is
unknown, it lies at an internal address, its host does not resolve) or did not answer. In
the second case its answer can remove the post but never confirm it: the post stays
unchecked, and the pass incomplete, until the origin answers.

Every removal goes on the store's removal list first (`tombstones`: the post, and for an
opt-out its author), so no later crawl adds it back from another instance's copy.

A pass remembers when it started; a post counts as checked once it was asked after that,
so a pass cut short by the request budget, a `Retry-After` or Ctrl-C goes on where it
stopped. When a pass is complete, state.json's `checked_at` moves to its start: that is
the age `corpus build` judges a store by. Requests per origin stay within `--max-requests`
and the rate limits, as in a crawl.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from typing import NamedTuple
from urllib.parse import urlsplit

from mastodon import MastodonAPIError, MastodonError, MastodonNotFoundError
from tqdm import tqdm

from queerbias.crawl.canonical import canonical_url, origin
from queerbias.crawl.keys import CrawlKey
from queerbias.crawl.mastodon.cleaning import clean_status
from queerbias.crawl.mastodon.client import (
    Caller,
    Refused,
    RetriesExhausted,
    RetryPolicy,
    RunLimitReached,
    Stopped,
    make_client,
)
from queerbias.crawl.mastodon.crawler import address_policy, run_workers
from queerbias.crawl.mastodon.etiquette import written_on_denied
from queerbias.crawl.mastodon.filters import (
    AUTHOR_OPTED_OUT,
    AUTOMATED,
    EMPTY,
    NO_KEYWORD,
    NOT_GERMAN,
    NOT_PUBLIC,
    OPTED_OUT,
    POST_OPTED_OUT,
    SUSPENDED,
    drop_reason,
    opted_out,
)
from queerbias.crawl.mastodon.records import MalformedStatus, make_post
from queerbias.crawl.mastodon.settings import CrawlSettings
from queerbias.crawl.mastodon.store import POSTS, CrawlStore, StoreError, post_pseudonym
from queerbias.text.keywords import KeywordMatcher

log = logging.getLogger(__name__)

DELETED, EDITED_OUT, DENIED = "deleted", "edited_out", "instance_denied"
EDITED, UNCHANGED, UNCHECKED = "edited", "unchanged", "unchecked"
_MASTODON_URI = re.compile(r"/users/[^/]+/statuses/(\d+)")
_CONTENT_REASONS = {NOT_GERMAN, NO_KEYWORD, AUTOMATED, EMPTY}  # decided at crawl time; only an edit reopens them
_BATCH = 100


def lookup_targets(data: dict) -> list[tuple[str, str]]:
    """(server base URL, status id there) to check a post at, best first: its origin (with the id it had
    there, or the id in a Mastodon uri), then the crawled instances that showed it."""
    uri = urlsplit(data["uri"])
    home = origin(data["uri"])
    sources = {origin(instance): local_id for instance, local_id in (data.get("sources") or {}).items()}
    targets = []
    if home in sources:
        targets.append((home, str(sources.pop(home))))
    elif (match := _MASTODON_URI.fullmatch(uri.path)) and uri.scheme in ("http", "https"):
        targets.append((home, match.group(1)))
    return targets + [(instance, str(local_id)) for instance, local_id in sources.items()]


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class _Ask(NamedTuple):
    """A stored post to ask a server about: where to ask (best first), its sealed data, and whether its origin was
    asked and did not answer (then a copy's answer may remove the post, never confirm it)."""

    pseudonym: str
    targets: list[tuple[str, str]]
    data: dict
    origin_silent: bool = False


class _ServerChecker:
    """Checks the stored posts that live on one server, committing in batches."""

    def __init__(self, base: str, items: list[_Ask], refresher: Refresher):
        self.base, self.items, self.r = base, items, refresher
        self.finished = False

    def run(self) -> None:
        try:
            self._run()
        except (Stopped, StoreError):
            return
        except Exception:  # odd data from one server must not stop the others
            log.exception("%s: unexpected error during refresh", self.base)
            self.r.count(UNCHECKED, len(self.items))

    def _run(self) -> None:
        r = self.r
        caller = Caller(make_client(self.base, user_agent=r.settings.user_agent, token=r.settings.token_for(self.base),
                                    policy=r.addresses, timeout=r.settings.request_timeout),
                        max_requests=r.settings.max_requests, policy=r.policy, sleep=r.sleep, stop=r.stop)
        remove, records, sealed = {}, {}, {}
        for done, ask in enumerate(self.items, 1):
            pseudonym, targets, data, _ = ask
            r.bar.update()
            try:
                status = caller.call(caller.api.status, targets[0][1])
            except MastodonNotFoundError:
                remove[pseudonym] = DELETED
                continue
            except MastodonAPIError as err:
                if len(err.args) > 1 and err.args[1] == 410:
                    remove[pseudonym] = DELETED
                else:
                    r.count(UNCHECKED)
                continue
            except RunLimitReached as err:
                log.warning("%s: refresh paused: %s", self.base, err)
                r.count(UNCHECKED, len(self.items) - done + 1)
                break
            except (MastodonError, RetriesExhausted, Refused) as err:
                # Another server that showed it may answer. An origin that cannot be asked (an internal address, a
                # host that does not resolve, an answer we refuse) is as if unknown; one that did not answer is not.
                silent = ask.origin_silent or (self.base == origin(data["uri"]) and not isinstance(err, Refused))
                r.fall_back(ask._replace(targets=targets[1:], origin_silent=silent))
                continue
            self._judge(ask, status, remove, records, sealed)
            if done % _BATCH == 0:
                r.apply(remove, records, sealed)
                remove, records, sealed = {}, {}, {}
        else:
            self.finished = True
        r.apply(remove, records, sealed)

    def _judge(self, ask: _Ask, status, remove: dict, records: dict, sealed: dict) -> None:
        r, pseudonym, data = self.r, ask.pseudonym, ask.data
        try:
            if canonical_url(str(status.get("uri"))) != canonical_url(data["uri"]):
                r.count(UNCHECKED)  # not the post we stored: a server answering for another one
                return
            cleaned = clean_status(status, r.matcher, r.relevant_tags)
            text = cleaned.text
            reason = drop_reason(status, text, r.matcher, r.settings.accept_missing_indexable)
            stored_text = r.texts.get(pseudonym)
            if reason in _CONTENT_REASONS and text == stored_text:
                reason = None
            if reason == SUSPENDED or (
                    reason == OPTED_OUT and opted_out(status.get("account") or {}, r.settings.accept_missing_indexable)):
                r.remove_author(pseudonym, SUSPENDED if reason == SUSPENDED else AUTHOR_OPTED_OUT)
                return
            if reason:
                remove[pseudonym] = {OPTED_OUT: POST_OPTED_OUT, NOT_PUBLIC: NOT_PUBLIC}.get(reason, EDITED_OUT)
                return
            if ask.origin_silent:
                r.count(UNCHECKED)  # a copy may say a post is gone, never that its silent origin still keeps it
                return
            post = make_post(status, cleaned, key=r.key, matcher=r.matcher, instance=self.base, now=r.clock())
        except (MalformedStatus, KeyError, TypeError, ValueError, AttributeError):
            r.count(UNCHECKED)
            return
        # The author is the one stored (a local account's domain is not known here); so is where it was seen.
        post.record["account"] = r.store.account_of(pseudonym) or post.record["account"]
        post.reidentification.update(account=data["account"], sources={**data.get("sources", {}),
                                                                         **post.reidentification["sources"]})
        sealed[pseudonym] = post.reidentification
        if text != stored_text:
            records[pseudonym] = post.record
            r.count(EDITED)
        else:
            r.count(UNCHANGED)


class Refresher:
    """One refresh pass over a store (or the rest of a pass that was cut short)."""

    def __init__(self, settings: CrawlSettings, store: CrawlStore, key: CrawlKey, policy: RetryPolicy,
                 sleep: Callable[[float], None], stop: threading.Event, clock: Callable[[], datetime] = _utc_now):
        self.settings, self.store, self.key, self.policy, self.sleep, self.stop = (
            settings, store, key, policy, sleep, stop)
        self.clock = clock
        self.matcher = KeywordMatcher(settings.keywords)
        self.relevant_tags = frozenset(settings.tags)
        self.addresses = address_policy(list(store.state["instances"]) + list(settings.instances))
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self.texts: dict[str, str] = {}
        self._next_round: dict[str, list] = {}
        # posts asked about, on stderr when it is a terminal; quiet in logs and pipes
        self.bar = tqdm(total=0, unit="post", desc="refresh", disable=None, dynamic_ncols=True)

    def fall_back(self, ask: _Ask) -> None:
        """Ask the next server of `ask.targets` for a post its first choice could not answer about, or count it
        unchecked when there is none."""
        if ask.targets:
            with self._lock:
                self._next_round.setdefault(ask.targets[0][0], []).append(ask)
                self.bar.total = (self.bar.total or 0) + 1
        else:
            self.count(UNCHECKED)

    def count(self, outcome: str, n: int = 1) -> None:
        if n:
            with self._lock:
                self.counts[outcome] += n

    def remove_author(self, pseudonym: str, reason: str = AUTHOR_OPTED_OUT) -> None:
        """Remove every stored post of the author of `pseudonym` and list them as removed: they opted out (or
        were suspended)."""
        account = self.store.account_of(pseudonym)
        if account is not None:
            removed = self.store.remove_authors({account: reason})
            with self._lock:
                self.counts.update(removed)

    def apply(self, remove: dict, records: dict, sealed: dict) -> None:
        if remove or records or sealed:
            removed = self.store.rewrite(remove, records, sealed)
            with self._lock:
                self.counts.update(removed)

    def run(self) -> dict:
        state = self.store.state["refresh"]
        started = state.get("pass_started") or self.clock().isoformat(timespec="seconds")
        self.store.rewrite(refresh={**state, "pass_started": started})
        with open(self.store.dir / POSTS, encoding="utf-8") as handle:
            self.texts = {post_pseudonym(r): r["text"] for r in map(json.loads, handle)}
        denied, identifiable = {}, 0
        for pseudonym, data in self.store.reidentification():
            identifiable += 1
            if data.get("checked_at", "") >= started:
                continue
            if written_on_denied(data["uri"], data["account"], self.settings.deny_list):
                denied[pseudonym] = DENIED
                continue
            self.fall_back(_Ask(pseudonym, lookup_targets(data), data))
        # Posts without sealed data (lost with a damaged reid.jsonl) cannot be asked: the pass stays incomplete.
        self.count(UNCHECKED, self.store.state["records"] - identifiable)
        self.apply(denied, {}, {})
        complete = True
        try:
            while self._next_round:
                groups, self._next_round = self._next_round, {}
                checkers = [_ServerChecker(base, items, self) for base, items in sorted(groups.items())]
                run_workers(checkers, self.store, self.stop)
                complete = complete and all(c.finished for c in checkers)
        finally:
            self.bar.close()
        complete = complete and not self.counts[UNCHECKED]
        last = {"finished_at": self.clock().isoformat(timespec="seconds"), "complete": complete, "counts": dict(sorted(self.counts.items()))}
        if complete:  # every post asked about: a recovered store may be built from again
            self.store.rewrite(refresh={"pass_started": None, "last": last}, checked_at=started, recovered_at=None)
        else:
            self.store.rewrite(refresh={"pass_started": started, "last": last})
        return last


def refresh(settings: CrawlSettings, *, policy: RetryPolicy = RetryPolicy(),
            sleep: Callable[[float], None] | None = None, stop: threading.Event | None = None,
            clock: Callable[[], datetime] = _utc_now) -> dict:
    """One refresh pass over `settings.out_dir`; returns {"complete", "counts", "finished_at"}."""
    stop = stop or threading.Event()
    key = CrawlKey(settings.key_file, outputs=(settings.out_dir,))
    store = CrawlStore(settings.out_dir, key, purpose="refresh")
    try:
        return Refresher(settings, store, key, policy, stop.wait if sleep is None else sleep, stop, clock).run()
    finally:
        store.close()
