"""A Mastodon.py client per instance, with bounded, rate-limit-aware retries.

Mastodon.py's own modes do not fit a long unattended crawl: "wait" retries forever
and "pace" raises once the server stops sending reset times. The client therefore
runs in "throw" mode and `Caller` retries itself: it waits for the announced
`X-RateLimit-Reset` when the budget is spent (never longer than `max_wait`), backs
off exponentially on network errors and 5xx answers, and gives up after
`max_attempts`. Every HTTP request is counted when it is sent, failed ones and
Mastodon.py's own instance look-ups included, so `max_requests` is a true
per-run budget.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import requests
from mastodon import (
    Mastodon,
    MastodonNetworkError,
    MastodonRatelimitError,
    MastodonServerError,
)

log = logging.getLogger(__name__)
T = TypeVar("T")


class RequestBudgetExhausted(Exception):
    """This run's `--max-requests` for one instance is used up; the cursor lets the next run go on."""


class RetriesExhausted(Exception):
    """An endpoint kept failing (network, 5xx or rate limit) after all retries."""


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    backoff_base: float = 2.0     # seconds before the 2nd attempt, doubled each time
    backoff_max: float = 60.0
    max_wait: float = 15 * 60.0   # longest wait for a rate-limit reset


class CountingSession(requests.Session):
    """A requests session that counts the requests it sends, whether or not an answer comes back."""

    def __init__(self):
        super().__init__()
        self.sent = 0

    def request(self, *args, **kwargs):
        self.sent += 1
        return super().request(*args, **kwargs)


def make_client(base_url: str, *, user_agent: str, token: str | None, timeout: float = 30.0) -> Mastodon:
    """Mastodon.py client that throws on rate limits and skips its version checks (we probe ourselves)."""
    return Mastodon(api_base_url=base_url, access_token=token, ratelimit_method="throw",
                    version_check_mode="none", request_timeout=timeout, user_agent=user_agent,
                    session=CountingSession())


class Caller:
    """Calls Mastodon.py methods of one client with retries, waits and a request budget."""

    def __init__(self, api: Mastodon, *, max_requests: int, policy: RetryPolicy = RetryPolicy(),
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.time):
        self.api, self.max_requests, self.policy = api, max_requests, policy
        self.sleep, self.clock = sleep, clock

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

    def call(self, method: Callable[..., T], *args, **kwargs) -> T:
        """`method(*args, **kwargs)`; MastodonAPIError other than 5xx is raised at once, for the caller to judge."""
        for attempt in range(1, self.policy.max_attempts + 1):
            if self.requests >= self.max_requests:
                raise RequestBudgetExhausted(f"{self.requests} requests")
            wait = self._reset_wait()
            if wait:
                log.info("%s: rate limit reached, waiting %.0f s for the reset", self.api.api_base_url, wait)
                self.sleep(wait)
            try:
                return method(*args, **kwargs)
            except MastodonRatelimitError as err:
                error: Exception = err
                if self._reset_wait() is None:  # no usable reset time: back off instead
                    self.sleep(self._backoff(attempt))
            except (MastodonNetworkError, MastodonServerError) as err:
                error = err
                if attempt < self.policy.max_attempts:
                    log.debug("%s: %s, retry %d", self.api.api_base_url, type(err).__name__, attempt)
                    self.sleep(self._backoff(attempt))
        raise RetriesExhausted(f"gave up after {self.policy.max_attempts} attempts: {describe_error(error)}")


def describe_error(error: Exception) -> str:
    """One line for stats and logs: the exception type and its first argument."""
    first = str(error.args[0]) if error.args else ""
    status = error.args[1] if len(error.args) > 1 else None
    return f"{type(error).__name__}" + (f" {status}" if status else "") + (f": {first}" if first else "")
