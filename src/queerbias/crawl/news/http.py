"""A small, careful HTTP client for feeds and article pages.

Everything a remote server sends is untrusted: only http/https URLs are fetched
(redirects included, so a feed cannot bounce us to file:// or ftp://), every
connection goes to an address checked after DNS resolution (no loopback, private or
link-local targets, on redirects too; see `queerbias.crawl.addresses`), every
request has a total deadline (`queerbias.crawl.deadline`: a server that drips its answer
is cut off), bodies are cut off at a size limit instead of being read whole, redirects
are followed by us, hop by hop, so that the caller can check each new address (its
site's robots.txt and TDM reservation) before it is fetched, and requests to one host
are spaced by a politeness delay, longer when the site's robots.txt asks for it
(`Crawl-delay`). A host that answers 429 (or 503 with `Retry-After`) is left alone for
as long as it asks; if that is longer than `max_host_wait`, its pages wait for a later
run. The User-Agent says who is crawling and why, with a contact, so site owners can
object.
"""

from __future__ import annotations

import email.message
import http.client
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from queerbias.crawl.addresses import AddressPolicy, RefusedAddress, UnresolvableHost
from queerbias.crawl.agent import require_contact
from queerbias.crawl.backoff import retry_after_seconds
from queerbias.crawl.deadline import DeadlinePassed, RequestDeadline
from queerbias.crawl.quoting import quote
from queerbias.errors import QueerbiasError

ALLOWED_SCHEMES = ("http", "https")
# Responses we give up on for good; anything else (timeouts, 5xx, 429) may work next run.
PERMANENT_STATUSES = frozenset({400, 401, 403, 404, 410, 451})
DEFAULT_BACKOFF = 60.0  # seconds a host that answered 429 without Retry-After is left alone
MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


class FetchError(QueerbiasError):
    """A URL could not be fetched; `retry` says whether a later run might succeed, `outcome` names
    the reason for the crawl's counts when it is more than a failed fetch."""

    def __init__(self, url: str, reason: str, retry: bool = True, status: int | None = None,
                 outcome: str | None = None):
        super().__init__(f"{url}: {reason}")
        self.url, self.retry, self.status, self.outcome = url, retry, status, outcome


@dataclass
class Response:
    url: str  # final URL after redirects
    status: int
    content_type: str
    charset: str | None
    body: bytes
    headers: email.message.Message | None = None


def check_url(url: str) -> str:
    """Return `url` if it is an absolute http(s) URL with a host, else raise FetchError."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() not in ALLOWED_SCHEMES or not parts.hostname:
        raise FetchError(url, "only absolute http:// and https:// URLs are fetched", retry=False)
    return url


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Hand every redirect back to `Fetcher.get` (as an HTTPError), which follows it itself."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def _guarded_handlers(policy: AddressPolicy, deadline: RequestDeadline) -> list[urllib.request.BaseHandler]:
    """HTTP and HTTPS handlers whose connections only reach addresses `policy` checked, and which
    `deadline` can cut."""

    def connect(*args, **kwargs):
        return deadline.track(policy.connect(*args, **kwargs))

    class Connection(http.client.HTTPConnection):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._create_connection = connect

    class SecureConnection(http.client.HTTPSConnection):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._create_connection = connect

    class Handler(urllib.request.HTTPHandler):
        def http_open(self, req):
            return self.do_open(Connection, req)

    class SecureHandler(urllib.request.HTTPSHandler):
        def https_open(self, req):
            return self.do_open(SecureConnection, req, context=self._context)

    return [Handler(), SecureHandler()]


class Fetcher:
    """GET with timeout, size limit, checked addresses, http(s)-only redirects and per-host politeness."""

    def __init__(self, user_agent: str, timeout: float = 20.0, max_bytes: int = 5_000_000, delay: float = 1.0,
                 allowed_hosts: Iterable[str] = (), max_host_wait: float = 60.0,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic):
        require_contact(user_agent)
        self.user_agent, self.timeout = user_agent, timeout
        self.max_bytes, self.delay, self.max_host_wait = max_bytes, delay, max_host_wait
        self.sleep, self.clock = sleep, clock
        self._deadline = RequestDeadline()
        # No ProxyHandler: environment proxies are not consulted for untrusted URLs.
        self._opener = urllib.request.build_opener(_NoRedirects(), urllib.request.ProxyHandler({}),
                                                   *_guarded_handlers(AddressPolicy(allowed_hosts), self._deadline))
        self._last_request: dict[str, float] = {}
        self._host_delay: dict[str, float] = {}
        self._blocked_until: dict[str, float] = {}

    def set_host_delay(self, host: str, seconds: float) -> None:
        """Space requests to `host` by at least `seconds` (its robots.txt Crawl-delay)."""
        self._host_delay[host] = max(seconds, self._host_delay.get(host, 0.0))

    def _wait_for(self, host: str, url: str) -> None:
        blocked = self._blocked_until.get(host, 0.0) - self.clock()
        if blocked > self.max_host_wait:
            raise FetchError(url, f"the host asked us to wait {blocked:.0f} s more; left for a later run",
                             retry=True, outcome="host_backoff")
        last = self._last_request.get(host)
        gap = max(self.delay, self._host_delay.get(host, 0.0))
        wait = max(blocked, 0.0 if last is None else last + gap - self.clock())
        if wait > 0:
            self.sleep(wait)
        self._last_request[host] = self.clock()

    def _back_off(self, host: str, headers) -> None:
        asked = retry_after_seconds(headers.get("Retry-After") if headers else None, time.time())
        self._blocked_until[host] = self.clock() + (DEFAULT_BACKOFF if asked is None else asked)

    def get(self, url: str, accept: str = "*/*", before_redirect: Callable[[str], None] | None = None) -> Response:
        """GET `url`, following up to MAX_REDIRECTS redirects; `before_redirect(new_url)` may refuse a hop
        (by raising FetchError) before it is fetched."""
        for _ in range(MAX_REDIRECTS + 1):
            response = self._get_once(url, accept)
            if isinstance(response, Response):
                return response
            url = check_url(urllib.parse.urljoin(url, response))
            if before_redirect is not None:
                before_redirect(url)
        raise FetchError(url, f"more than {MAX_REDIRECTS} redirects", retry=False)

    def _get_once(self, url: str, accept: str) -> Response | str:
        """The answer to one request, or the address a redirect points to."""
        check_url(url)
        host = urllib.parse.urlsplit(url).hostname or ""
        self._wait_for(host, url)
        request = urllib.request.Request(url, headers={
            "User-Agent": self.user_agent, "Accept": accept, "Accept-Encoding": "identity"})
        try:
            with self._deadline.within(self.timeout), self._opener.open(request, timeout=self.timeout) as reply:
                body = reply.read(self.max_bytes + 1)
                if len(body) > self.max_bytes:
                    raise FetchError(url, f"response larger than {self.max_bytes} bytes",
                                     retry=False)
                headers: email.message.Message = reply.headers
                return Response(url=reply.geturl(), status=reply.status,
                                content_type=headers.get_content_type(),
                                charset=headers.get_content_charset(), body=body, headers=headers)
        except urllib.error.HTTPError as err:
            if err.code in _REDIRECTS and err.headers.get("Location"):
                return err.headers["Location"]
            if err.code == 429 or (err.code == 503 and err.headers.get("Retry-After")):
                self._back_off(host, err.headers)
            # 3xx here means urllib refused the redirect (bad scheme, loop): final too.
            permanent = err.code in PERMANENT_STATUSES or 300 <= err.code < 400
            raise FetchError(url, f"HTTP {err.code} {quote(err.reason, 80)}", status=err.code,
                             retry=not permanent) from None
        except RefusedAddress as err:
            raise FetchError(url, str(err), retry=False, outcome="private_address") from None
        except DeadlinePassed as err:
            raise FetchError(url, f"network error: {err}") from None
        except UnresolvableHost as err:
            raise FetchError(url, str(err)) from None
        except (OSError, http.client.HTTPException) as err:  # URLError, timeouts, resets
            reason = getattr(err, "reason", err)
            if isinstance(reason, RefusedAddress):
                raise FetchError(url, str(reason), retry=False, outcome="private_address") from None
            raise FetchError(url, f"network error: {quote(reason)}") from None
        except ValueError as err:  # malformed URL that urllib refuses
            raise FetchError(url, f"invalid URL: {err}", retry=False) from None
