"""A Mastodon.py client per instance, with bounded, rate-limit-aware retries.

Mastodon.py's own modes do not fit a long unattended crawl: "wait" retries forever
and "pace" raises once the server stops sending reset times. The client therefore
runs in "throw" mode and `Caller` retries itself:

- a server that says how long to wait (`Retry-After`, in seconds or as a date) is
  obeyed to the second; one that asks for longer than `max_wait` ends this instance's
  run instead of being asked again inside the window;
- when the `X-RateLimit-*` budget is spent it waits for the announced reset;
- network errors and 5xx answers back off exponentially, up to `max_attempts`;
- refusals that no retry can change (a host that does not resolve, an internal
  address, an oversized answer) fail at once.

Every HTTP request is counted when it is sent, failed ones and Mastodon.py's own
instance look-ups included, so `max_requests` is a true per-run budget. Waiting goes
through an injected `sleep` that returns early when the run is being stopped.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from mastodon import (
    Mastodon,
    MastodonNetworkError,
    MastodonRatelimitError,
    MastodonServerError,
)

from queerbias.crawl.addresses import AddressPolicy, RefusedAddress, UnresolvableHost
from queerbias.crawl.mastodon.transport import BoundedSession, DisallowedByRobots, RefusedAnswer
from queerbias.crawl.quoting import quote
from queerbias.text.scrub import scrub_personal_data

log = logging.getLogger(__name__)
T = TypeVar("T")
REASON_CHARS = 80  # of a server's own text in a stored error


class RunLimitReached(Exception):
    """This run may ask this server nothing more; the next run goes on where it stopped."""


class RequestBudgetExhausted(RunLimitReached):
    """This run's `--max-requests` for one instance is used up; the cursor lets the next run go on."""


class RetriesExhausted(Exception):
    """An endpoint kept failing (network, 5xx or rate limit) after all retries."""


class ServerAskedToWait(RunLimitReached):
    """The server asked for a pause longer than we wait within one run."""

    def __init__(self, seconds: float):
        super().__init__(f"the server asked to wait {seconds:.0f} s; rerun after that")
        self.seconds = seconds


class Stopped(Exception):
    """The run is being stopped (Ctrl-C); nothing more is fetched."""


class Refused(Exception):
    """A request that no retry can change: unresolvable host, internal address, oversized or undecodable answer."""


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    backoff_base: float = 2.0     # seconds before the 2nd attempt, doubled each time
    backoff_max: float = 60.0
    max_wait: float = 15 * 60.0   # longest wait for a rate-limit reset or a Retry-After


def make_client(base_url: str, *, user_agent: str, token: str | None, policy: AddressPolicy,
                timeout: float = 30.0) -> Mastodon:
    """Mastodon.py client that throws on rate limits and skips its version checks (we probe ourselves)."""
    return Mastodon(api_base_url=base_url, access_token=token, ratelimit_method="throw",
                    version_check_mode="none", request_timeout=timeout, user_agent=user_agent,
                    session=BoundedSession(policy))


def _refusal(error: BaseException) -> BaseException | None:
    """Our own refusal behind a MastodonNetworkError (Mastodon.py wraps whatever the session raised)."""
    seen = 0
    while error is not None and seen < 10:
        if isinstance(error, (UnresolvableHost, RefusedAddress, RefusedAnswer, DisallowedByRobots)):
            return error
        error, seen = error.__cause__ or error.__context__, seen + 1
    return None


class Caller:
    """Calls Mastodon.py methods of one client with retries, waits and a request budget."""

    def __init__(self, api: Mastodon, *, max_requests: int, policy: RetryPolicy = RetryPolicy(),
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.time,
                 stop: threading.Event | None = None):
        self.api, self.max_requests, self.policy = api, max_requests, policy
        self.sleep, self.clock = sleep, clock
        self.stop = stop or threading.Event()

    @property
    def requests(self) -> int:
        """HTTP requests sent by this client so far."""
        return self.api.session.sent

    def _reset_wait(self) -> float | None:
        """Seconds until the rate-limit window resets, if the budget is spent and a reset is known."""
        reset = self.api.ratelimit_reset
        if self.api.ratelimit_remaining > 0 or reset is None:
            return None
        return min(max(reset - self.clock(), 0.0), self.policy.max_wait)

    def _backoff(self, attempt: int) -> float:
        return min(self.policy.backoff_base * 2 ** (attempt - 1), self.policy.backoff_max)

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self.sleep(seconds)
        if self.stop.is_set():
            raise Stopped()

    def _asked_wait(self) -> float | None:
        """The server's Retry-After of the last answer; ServerAskedToWait if it is too long."""
        asked = self.api.session.retry_after
        if asked is not None and asked > self.policy.max_wait:
            raise ServerAskedToWait(asked)
        return asked

    def call(self, method: Callable[..., T], *args, **kwargs) -> T:
        """`method(*args, **kwargs)`; MastodonAPIError other than 5xx is raised at once, for the caller to judge."""
        error: Exception | None = None
        for attempt in range(1, self.policy.max_attempts + 1):
            if self.stop.is_set():
                raise Stopped()
            if self.requests >= self.max_requests:
                raise RequestBudgetExhausted(f"{self.requests} requests")
            wait = self._reset_wait()
            if wait:
                log.info("%s: rate limit reached, waiting %.0f s for the reset", self.api.api_base_url, wait)
                self._wait(wait)
            try:
                return method(*args, **kwargs)
            except MastodonRatelimitError as err:
                error = err
                if attempt == self.policy.max_attempts:
                    break  # no wait that no request follows
                asked = self._asked_wait()
                if asked is not None:
                    log.info("%s: asked to wait %.0f s", self.api.api_base_url, asked)
                    self._wait(asked)
                    self.api.ratelimit_reset = None  # the server's own wait supersedes an older reset time
                elif self._reset_wait() is None:  # no usable reset time: back off instead
                    self._wait(self._backoff(attempt))
            except (MastodonNetworkError, MastodonServerError) as err:
                refusal = _refusal(err)
                if isinstance(refusal, DisallowedByRobots):
                    raise refusal from None  # the crawler reports the feed as robots_disallowed
                if refusal is not None:
                    raise Refused(str(refusal)) from None
                error = err
                if attempt < self.policy.max_attempts:
                    log.debug("%s: %s, retry %d", self.api.api_base_url, type(err).__name__, attempt)
                    asked = self._asked_wait() if isinstance(err, MastodonServerError) else None
                    self._wait(asked if asked is not None else self._backoff(attempt))
        raise RetriesExhausted(f"gave up after {self.policy.max_attempts} attempts: {describe_error(error)}")


def describe_error(error: BaseException | None) -> str:
    """One line for stats and logs: the exception type, the HTTP status and a short, scrubbed reason.

    What a server sent (an error page, a JSON `error` text, a reason phrase) may name people or
    run to megabytes, and a failed request's URL holds status ids: none of it is repeated beyond
    `REASON_CHARS` characters with personal data replaced.
    """
    if error is None:
        return "unknown error"
    name = type(error).__name__
    if isinstance(error, Refused):  # ours, but may quote a header the server chose
        return f"{name}: {_short(error)}"
    if type(error).__module__.startswith("queerbias."):
        return quote(f"{name}: {error}")  # our own words
    if isinstance(error, MastodonNetworkError):
        cause = error.__cause__ or error.__context__
        return f"{name}: network error ({type(cause).__name__})" if cause else f"{name}: network error"
    args = error.args
    status = args[1] if len(args) > 1 and isinstance(args[1], int) else None
    if args and isinstance(args[0], str) and args[0].startswith("Could not parse response as JSON"):
        return f"{name}: the answer is not JSON"
    if status is not None:
        reason = " ".join(str(a) for a in args[2:] if a)
        return f"{name} {status}: {_short(reason)}" if reason else f"{name} {status}"
    return f"{name}: {_short(args[0])}" if args else name


def _short(text: object) -> str:
    return quote(scrub_personal_data(str(text)), REASON_CHARS)
