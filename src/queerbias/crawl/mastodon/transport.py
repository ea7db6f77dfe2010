"""The requests session under Mastodon.py: counted, bounded, and kept out of internal networks.

Every server is hostile. requests would read a whole answer into memory and inflate a
gzip body without limit (a 400 KB gzip answer took a crawler to 1.1 GB); this session
streams every body, inflates it itself with a hard cap on the *decompressed* size, and
refuses more than `max_bytes`. A request's timeout is a total deadline, not one per read
(`queerbias.crawl.deadline`), so a server that drips its answer cannot hold a crawl. A JSON
answer is decoded as its declared charset, else as UTF-8 (or the UTF-16/32 its bytes show,
RFC 8259); one that is neither is refused, instead of being read as garbage. Connections go
through `AddressPolicy`, so neither a post's uri nor a redirect can reach a private address.
It also counts the requests it sends (the per-run budget) and remembers the last
`Retry-After`, which Mastodon.py discards. Once an instance is probed, every request it is
about to send (a redirect's too) is put to the instance's robots.txt with its path and query,
as RFC 9309 (section 2.2.2) matches them: Mastodon.py adds `?limit=` and paging cursors that
a rule such as `Disallow: /*?` is written against.
"""

from __future__ import annotations

import email.message
import time
import zlib
from collections.abc import Callable

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from queerbias.crawl.addresses import AddressPolicy
from queerbias.crawl.backoff import retry_after_seconds
from queerbias.crawl.deadline import DeadlinePassed, RequestDeadline
from queerbias.errors import QueerbiasError

MAX_RESPONSE_BYTES = 4_000_000  # a page of 40 statuses is 100-300 KB
_CHUNK = 64 * 1024
_ENCODINGS = {"", "identity", "gzip", "x-gzip", "deflate"}


class RefusedAnswer(QueerbiasError):
    """An answer we will not read; never retried."""


class ResponseTooLarge(RefusedAnswer):
    """The (decompressed) answer exceeds the cap."""


class UndecodableAnswer(RefusedAnswer):
    """A JSON answer that is neither in its declared charset nor in UTF-8."""


class DisallowedByRobots(QueerbiasError):
    """robots.txt keeps us from a request's path and query; it is not sent."""


def _guarded_adapter(policy: AddressPolicy, deadline: RequestDeadline) -> HTTPAdapter:
    """An HTTPAdapter whose connections resolve and check addresses through `policy`, and which
    `deadline` can cut."""

    def new_conn(self):
        return deadline.track(policy.connect((self._dns_host, self.port), self.timeout, self.source_address))

    http_conn = type("GuardedHTTPConnection", (HTTPConnection,), {"_new_conn": new_conn})
    https_conn = type("GuardedHTTPSConnection", (HTTPSConnection,), {"_new_conn": new_conn})
    pools = {"http": type("GuardedHTTPPool", (HTTPConnectionPool,), {"ConnectionCls": http_conn}),
             "https": type("GuardedHTTPSPool", (HTTPSConnectionPool,), {"ConnectionCls": https_conn})}

    class GuardedAdapter(HTTPAdapter):
        def init_poolmanager(self, *args, **kwargs):
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = pools

    return GuardedAdapter()


def read_capped(response: requests.Response, max_bytes: int) -> bytes:
    """The decoded body of a streamed `response`, inflated by us with a cap; ResponseTooLarge beyond it."""
    declared = response.headers.get("Content-Length", "")
    encoding = response.headers.get("Content-Encoding", "").strip().lower()
    if encoding not in _ENCODINGS:
        raise ResponseTooLarge(f"unsupported Content-Encoding {encoding[:40]!r}")
    if declared.isdigit() and encoding in {"", "identity"} and int(declared) > max_bytes:
        raise ResponseTooLarge(f"answer of {int(declared)} bytes is larger than the {max_bytes} accepted")
    inflate = zlib.decompressobj(zlib.MAX_WBITS | 32) if encoding not in {"", "identity"} else None
    body = bytearray()
    try:
        for chunk in response.raw.stream(_CHUNK, decode_content=False):
            while chunk:
                room = max_bytes - len(body) + 1
                if inflate is None:
                    body += chunk[:room]
                    chunk = b""
                else:
                    body += inflate.decompress(chunk, room)
                    chunk = inflate.unconsumed_tail
                if len(body) > max_bytes:
                    raise ResponseTooLarge(f"answer larger than the {max_bytes} bytes accepted "
                                           "(after decompression)")
    except zlib.error as err:
        raise ResponseTooLarge(f"answer cannot be decompressed: {err}") from None
    finally:
        response.close()
    return bytes(body)


def json_encoding(response: requests.Response) -> str | None:
    """How to decode the body of `response`: a JSON answer (or one without a type) in its declared
    charset, else UTF-8 or the UTF-16/32 its bytes show; UndecodableAnswer if the body is not in it.
    Other types keep requests' choice."""
    declared = response.headers.get("Content-Type", "").strip()
    header = email.message.Message()
    header["Content-Type"] = declared
    if declared and "json" not in header.get_content_type():
        return response.encoding
    body = response.content
    encoding = header.get_content_charset() or requests.utils.guess_json_utf(body) or "utf-8"
    try:
        body.decode(encoding)
    except (LookupError, UnicodeDecodeError):
        named = "its declared charset" if header.get_content_charset() else "UTF-8, and it declares no charset"
        raise UndecodableAnswer(f"the answer is not in {named}") from None
    return encoding


class BoundedSession(requests.Session):
    """requests.Session for one Mastodon.py client: counted, size-capped, address-checked."""

    def __init__(self, policy: AddressPolicy, max_bytes: int = MAX_RESPONSE_BYTES):
        super().__init__()
        self.max_bytes = max_bytes
        self.sent = 0
        self.retry_after: float | None = None
        self.max_redirects = 5
        self.trust_env = False  # no proxies or .netrc from the environment for hostile servers
        self.headers["Accept-Encoding"] = "gzip, deflate"
        self.deadline = RequestDeadline()
        # Why robots.txt keeps us from a URL (None when it does not); set once the instance is probed.
        self.robots: Callable[[str], str | None] | None = None
        adapter = _guarded_adapter(policy, self.deadline)
        self.mount("http://", adapter)
        self.mount("https://", adapter)

    def send(self, request, **kwargs):
        """Send a prepared request (the first, or a redirect's) unless robots.txt keeps us from its URL."""
        why = self.robots(request.url) if self.robots is not None else None
        if why:
            raise DisallowedByRobots(why)
        return super().send(request, **kwargs)

    def request(self, method, url, *args, **kwargs):
        """A counted request whose `timeout` (seconds) bounds the whole exchange, body included."""
        self.sent += 1
        self.retry_after = None
        kwargs["stream"] = True
        timeout = kwargs.get("timeout")
        try:
            with self.deadline.within(timeout if isinstance(timeout, (int, float)) else None):
                response = super().request(method, url, *args, **kwargs)
                if response.status_code in (429, 503):
                    self.retry_after = retry_after_seconds(response.headers.get("Retry-After"), time.time())
                response._content = read_capped(response, self.max_bytes)
        except DeadlinePassed as err:
            raise requests.exceptions.Timeout(str(err)) from None
        response._content_consumed = True
        response.encoding = json_encoding(response)
        return response
