"""A small, careful HTTP client for feeds and article pages.

Everything a remote server sends is untrusted: only http/https URLs are fetched
(redirects included, so a feed cannot bounce us to file:// or ftp://), every
request has a timeout, bodies are cut off at a size limit instead of being read
whole, and requests to one host are spaced by a politeness delay. The
User-Agent says who is crawling and why, so site owners can object.
"""

from __future__ import annotations

import email.message
import http.client
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

from queerbias import __version__
from queerbias.errors import QueerbiasError

ALLOWED_SCHEMES = ("http", "https")
DEFAULT_USER_AGENT = (f"queerbias-news/{__version__} (research crawler collecting German news "
                      "about LGBTQ+ topics for language-model bias studies)")
# Responses we give up on for good; anything else (timeouts, 5xx, 429) may work next run.
PERMANENT_STATUSES = frozenset({400, 401, 403, 404, 410, 451})


class FetchError(QueerbiasError):
    """A URL could not be fetched; `retry` says whether a later run might succeed."""

    def __init__(self, url: str, reason: str, retry: bool = True, status: int | None = None):
        super().__init__(f"{url}: {reason}")
        self.url, self.retry, self.status = url, retry, status


@dataclass
class Response:
    url: str  # final URL after redirects
    status: int
    content_type: str
    charset: str | None
    body: bytes


def check_url(url: str) -> str:
    """Return `url` if it is an absolute http(s) URL with a host, else raise FetchError."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() not in ALLOWED_SCHEMES or not parts.hostname:
        raise FetchError(url, "only absolute http:// and https:// URLs are fetched", retry=False)
    return url


class _SafeRedirects(urllib.request.HTTPRedirectHandler):
    max_redirections = 5

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        check_url(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class Fetcher:
    """GET with timeout, size limit, http(s)-only redirects and a per-host delay."""

    def __init__(self, user_agent: str = DEFAULT_USER_AGENT, timeout: float = 20.0,
                 max_bytes: int = 5_000_000, delay: float = 1.0):
        self.user_agent, self.timeout = user_agent, timeout
        self.max_bytes, self.delay = max_bytes, delay
        # No ProxyHandler: environment proxies are not consulted for untrusted URLs.
        self._opener = urllib.request.build_opener(_SafeRedirects(), urllib.request.ProxyHandler({}))
        self._last_request: dict[str, float] = {}

    def _wait_for(self, host: str) -> None:
        last = self._last_request.get(host)
        if last is not None:
            time.sleep(max(0.0, last + self.delay - time.monotonic()))
        self._last_request[host] = time.monotonic()

    def get(self, url: str, accept: str = "*/*") -> Response:
        check_url(url)
        self._wait_for(urllib.parse.urlsplit(url).hostname or "")
        request = urllib.request.Request(url, headers={
            "User-Agent": self.user_agent, "Accept": accept, "Accept-Encoding": "identity"})
        try:
            with self._opener.open(request, timeout=self.timeout) as reply:
                body = reply.read(self.max_bytes + 1)
                if len(body) > self.max_bytes:
                    raise FetchError(url, f"response larger than {self.max_bytes} bytes",
                                     retry=False)
                headers: email.message.Message = reply.headers
                return Response(url=reply.geturl(), status=reply.status,
                                content_type=headers.get_content_type(),
                                charset=headers.get_content_charset(), body=body)
        except urllib.error.HTTPError as err:
            # 3xx here means urllib refused the redirect (bad scheme, loop): final too.
            permanent = err.code in PERMANENT_STATUSES or 300 <= err.code < 400
            raise FetchError(url, f"HTTP {err.code} {err.reason}", status=err.code,
                             retry=not permanent) from None
        except (OSError, http.client.HTTPException) as err:  # URLError, timeouts, resets
            raise FetchError(url, f"network error: {getattr(err, 'reason', err)}") from None
        except ValueError as err:  # malformed URL that urllib refuses
            raise FetchError(url, f"invalid URL: {err}", retry=False) from None
