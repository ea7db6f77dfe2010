"""A small Mastodon server on 127.0.0.1: the crawler's test instance, for tests and for people.

`queerbias crawl test-server` (or `python -m queerbias.crawl.mastodon.testserver`) serves
a demo instance of invented accounts and German posts (some of them opted out, a bot, an
#nsfw post, English ones) until Ctrl-C, and prints the crawl command to try against it;
the crawler's tests start the same server with data and faults of their own.

It answers the endpoints Mastodon.py 2.x really calls, the way Mastodon does:
`/api/v1/instance/` and `/api/v2/instance/` (with the trailing slash Mastodon.py
uses), `/api/v1/instance/rules`, `/api/v1/instance/terms_of_service`,
`/api/v1/timelines/tag/<percent-encoded tag>`, `/api/v1/timelines/public?local=1`
with `max_id`/`since_id`/`min_id`/`limit`, newest first, `Link` headers whose
next URL carries `max_id`, `X-RateLimit-*` headers, `/api/v1/statuses/<id>` (404
once a status is deleted) and `/robots.txt`. Faults (429 with or without
`Retry-After`, 500, login required, disabled feeds) and raw hostile answers are
switched on per instance.

Statuses are written with the domains of a small fediverse (`https://a.example/...`).
Servers started together in a `Fediverse` answer with those addresses rewritten to the
servers' real `http://127.0.0.1:PORT`, so a post's uri leads to a real origin server.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

from queerbias.options import cli_type, integer

RATE_LIMIT = 300


def status(id_: int, text: str, *, domain: str, created: datetime, username: str = "alice",
           acct: str | None = None, uri: str | None = None, language: str | None = "de",
           tags: tuple[str, ...] = (), bot: bool = False, indexable: bool | None = True,
           noindex: bool = False, discoverable: bool | None = True, note: str = "",
           fields: tuple[tuple[str, str], ...] = (), spoiler: str = "", reblog: dict | None = None,
           visibility: str = "public") -> dict:
    """A status as Mastodon serialises it; `uri` is global, `id_` is local to `domain`."""
    acct = acct or username
    account_domain = acct.split("@")[1] if "@" in acct else domain
    account = {
        "id": str(abs(hash(acct)) % 10**9), "username": username, "acct": acct, "display_name": username.title(),
        "note": note, "bot": bot, "noindex": noindex, "locked": False, "group": False,
        "url": f"https://{account_domain}/@{username}", "created_at": "2020-01-01T00:00:00.000Z",
        "followers_count": 1, "following_count": 1, "statuses_count": 1, "emojis": [],
        "fields": [{"name": name, "value": value, "verified_at": None} for name, value in fields],
        "avatar": "", "avatar_static": "", "header": "", "header_static": "",
    }
    if indexable is not None:
        account["indexable"] = indexable
    if discoverable is not None:
        account["discoverable"] = discoverable
    uri = uri or f"https://{account_domain}/users/{username}/statuses/{id_}"
    return {
        "id": str(id_), "uri": uri, "url": uri.replace("/users/", "/@").replace("/statuses/", "/"),
        "created_at": created.strftime("%Y-%m-%dT%H:%M:%S.000Z"), "account": account,
        "content": "" if reblog else text, "language": language, "visibility": visibility,
        "sensitive": bool(spoiler), "spoiler_text": spoiler, "reblog": reblog,
        "tags": [{"name": t, "url": f"https://{domain}/tags/{t}"} for t in tags],
        "mentions": [], "emojis": [], "media_attachments": [], "replies_count": 0, "reblogs_count": 0,
        "favourites_count": 0, "in_reply_to_id": None, "in_reply_to_account_id": None, "poll": None,
        "card": None, "application": None, "edited_at": None,
    }


@dataclass
class FakeInstance:
    """The data and fault switches of one fake server."""

    domain: str
    statuses: list[dict] = field(default_factory=list)
    version: str = "4.4.0"
    hashtag_feeds: str = "public"          # "public", "authenticated" or "disabled"
    live_feeds: str = "public"
    token: str | None = None               # bearer token that unlocks "authenticated" feeds
    # (path prefix, status[, headers]), each served once instead of the real answer
    faults: list[tuple] = field(default_factory=list)
    # path -> (status, headers, body bytes[, reason phrase]): hostile answers served every time
    raw: dict[str, tuple] = field(default_factory=dict)
    terms: str | None = "Seid nett zueinander."
    rules: tuple[str, ...] = ("Keine Diskriminierung.",)
    title: str | None = None               # None: the domain
    robots: str | None = None              # robots.txt body; None answers 404
    advertise_feed_access: bool = True     # servers before 4.4 do not say whether feeds need login
    # path -> seconds between bytes: the answer is dripped one byte at a time (until the client hangs up)
    drip: dict[str, float] = field(default_factory=dict)

    def find(self, id_: str) -> dict | None:
        """A status by local id, also when only its boost is in the timeline."""
        for s in self.statuses:
            for candidate in (s, s.get("reblog")):
                if candidate and candidate["id"] == id_:
                    return candidate
        return None


class _Handler(BaseHTTPRequestHandler):
    server: "FakeMastodonServer"
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_GET(self):  # noqa: N802 - http.server's naming
        self.server.record(self)
        parts = urlsplit(self.path)
        path = unquote(parts.path).rstrip("/")
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        inst = self.server.instance
        if path in inst.raw:
            code, headers, body, *reason = inst.raw[path]
            return self._send_bytes(code, body, headers, reason=reason[0] if reason else None)
        fault = self.server.take_fault(path)
        if fault is not None:
            code, headers = fault
            if code == 429:
                return self._send(429, {"error": "Too many requests"}, remaining=0, reset_in=1.0,
                                  headers=headers, reset=not headers)
            return self._send(code, {"error": "Internal server error"}, headers=headers)
        if path == "/robots.txt":
            if inst.robots is None:
                return self._send(404, {"error": "Record not found"})
            return self._send_bytes(200, inst.robots.encode(), {"Content-Type": "text/plain"})
        if path == "/api/v1/instance":
            return self._send(200, {"uri": inst.domain, "title": inst.title or inst.domain, "version": inst.version,
                                    "description": "", "languages": ["de"], "rules": []})
        if path == "/api/v2/instance":
            return self._send(200, self._instance_v2())
        if path == "/api/v1/instance/rules":
            return self._send(200, self._instance_v2()["rules"])
        if path == "/api/v1/instance/terms_of_service":
            if inst.terms is None:
                return self._send(404, {"error": "Record not found"})
            return self._send(200, {"effective_date": "2024-01-01", "effective": True, "content": inst.terms,
                                    "succeeded_by": None})
        if path.startswith("/api/v1/statuses/"):
            found = inst.find(path.rsplit("/", 1)[1])
            return self._send(200, found) if found else self._send(404, {"error": "Record not found"})
        if path.startswith("/api/v1/timelines/tag/"):
            tag = path.rsplit("/", 1)[1].lower()
            if (denied := self._denied(inst.hashtag_feeds)) is not None:
                return denied
            return self._timeline([s for s in inst.statuses if tag in {t["name"] for t in s["tags"]}], query)
        if path == "/api/v1/timelines/public":
            if (denied := self._denied(inst.live_feeds)) is not None:
                return denied
            local = query.get("local") in {"1", "true"}
            return self._timeline([s for s in inst.statuses if not local or "@" not in s["account"]["acct"]], query)
        return self._send(404, {"error": "Record not found"})

    def _denied(self, access: str):
        """Mastodon answers 422 to anonymous requests on login-only feeds and 404 on disabled ones."""
        inst = self.server.instance
        authorised = inst.token is not None and self.headers.get("Authorization") == f"Bearer {inst.token}"
        if access == "disabled":
            return self._send(404, {"error": "Record not found"})
        if access == "authenticated" and not authorised:
            return self._send(422, {"error": "This method requires an authenticated user"})
        return None

    def _instance_v2(self) -> dict:
        inst = self.server.instance
        return {
            "domain": inst.domain, "title": inst.title or inst.domain, "version": inst.version, "source_url": "",
            "description": "", "languages": ["de"], "api_versions": {"mastodon": 6},
            "usage": {"users": {"active_month": 10}}, "thumbnail": {"url": ""},
            "registrations": {"enabled": True, "approval_required": False, "message": None},
            "contact": {"email": f"admin@{inst.domain}", "account": None},
            "rules": [{"id": str(i + 1), "text": text, "hint": ""} for i, text in enumerate(inst.rules)],
            "configuration": {"timelines_access": {
                "live_feeds": {"local": inst.live_feeds, "remote": inst.live_feeds},
                "hashtag_feeds": {"local": inst.hashtag_feeds, "remote": inst.hashtag_feeds},
                "trending_link_feeds": {"local": "public", "remote": "public"},
            }} if inst.advertise_feed_access else {},
        }

    def _timeline(self, statuses: list[dict], query: dict):
        """Newest first, as Mastodon pages: ids below max_id, above since_id (or min_id, oldest first)."""
        limit = min(int(query.get("limit", 20)), 40)
        items = sorted(statuses, key=lambda s: int(s["id"]), reverse=True)
        if "max_id" in query:
            items = [s for s in items if int(s["id"]) < int(query["max_id"])]
        if "since_id" in query:
            items = [s for s in items if int(s["id"]) > int(query["since_id"])]
        if "min_id" in query:
            items = [s for s in items if int(s["id"]) > int(query["min_id"])][-limit:]
        page = items[:limit]
        links = []
        base = f"http://{self.headers['Host']}{urlsplit(self.path).path}"
        if page:
            if len(page) == limit:
                links.append(f'<{base}?max_id={page[-1]["id"]}>; rel="next"')
            links.append(f'<{base}?min_id={page[0]["id"]}>; rel="prev"')
        return self._send(200, page, link=", ".join(links))

    def _send(self, code: int, body, *, link: str = "", remaining: int | None = None, reset_in: float = 300.0,
              headers: dict | None = None, reset: bool = True):
        server = self.server
        with server.lock:
            server.rate_remaining = max(server.rate_remaining - 1, 0)
            left = server.rate_remaining if remaining is None else remaining
        extra = {"X-RateLimit-Limit": str(RATE_LIMIT), "X-RateLimit-Remaining": str(left)}
        if reset:
            stamp = datetime.now(timezone.utc) + timedelta(seconds=reset_in)
            extra["X-RateLimit-Reset"] = stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        if link:
            extra["Link"] = link
        data = server.fediverse.localise(json.dumps(body))
        self._send_bytes(code, data.encode(), {"Content-Type": "application/json; charset=utf-8",
                                               **extra, **(headers or {})})

    def _send_bytes(self, code: int, data: bytes, headers: dict, reason: str | None = None):
        self.send_response(code, reason)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        pause = self.server.instance.drip.get(unquote(urlsplit(self.path).path).rstrip("/"))
        try:
            if pause is None:
                self.wfile.write(data)
                return
            for i in range(len(data)):
                self.wfile.write(data[i:i + 1])
                self.wfile.flush()
                with self.server.lock:
                    self.server.dripped += 1
                time.sleep(pause)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass  # the client gave up reading (size caps, deadlines)


class Fediverse:
    """The domain -> address book of servers started together; rewrites `https://domain` in answers."""

    def __init__(self):
        self.addresses: dict[str, str] = {}

    def localise(self, text: str) -> str:
        for domain, url in self.addresses.items():
            text = text.replace(f"https://{domain}", url)
        return text

    def url(self, domain: str) -> str:
        return self.addresses[domain]


class FakeMastodonServer(ThreadingHTTPServer):
    """One fake instance on an ephemeral port; use as a context manager."""

    daemon_threads = True

    def __init__(self, instance: FakeInstance, fediverse: Fediverse | None = None, port: int = 0):
        super().__init__(("127.0.0.1", port), _Handler)
        self.instance = instance
        self.fediverse = fediverse or Fediverse()
        self.fediverse.addresses[instance.domain] = self.url
        self.lock = threading.Lock()
        self.rate_remaining = RATE_LIMIT
        self.requests: list[dict] = []
        self.dripped = 0  # bytes sent of dripped answers
        self._gate = threading.Event()
        self._gate.set()
        self._pause_after: int | None = None
        self.holding = 0  # requests held at the gate now (a held request is never answered before `resume`)
        self.paused = threading.Event()  # set once a request is held

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    @property
    def netloc(self) -> str:
        return self.url.removeprefix("http://")

    def record(self, handler: _Handler) -> None:
        """Log the request; while paused, hold it until the test resumes (lets a test kill or interrupt the
        client mid-crawl, and see that it did not wait for the answer)."""
        with self.lock:
            self.requests.append({"path": handler.path, "headers": dict(handler.headers)})
            timeline_calls = sum("/timelines/" in r["path"] for r in self.requests)
            hold = self._pause_after is not None and timeline_calls > self._pause_after
            self.holding += hold
        if hold:
            self.paused.set()
            self._gate.wait()  # no time limit: only `resume` (or closing the server) lets it go on
            with self.lock:
                self.holding -= 1

    def take_fault(self, path: str) -> tuple[int, dict] | None:
        with self.lock:
            for i, fault in enumerate(self.instance.faults):
                if path.startswith(fault[0]):
                    del self.instance.faults[i]
                    return fault[1], (fault[2] if len(fault) > 2 else {})
        return None

    def pause_after_timeline_requests(self, n: int) -> None:
        """Hold every timeline request after the first `n` until `resume`."""
        self._pause_after = n
        self._gate.clear()

    def resume(self) -> None:
        self._pause_after = None
        self._gate.set()

    def timeline_requests(self) -> list[str]:
        return [r["path"] for r in self.requests if "/timelines/" in r["path"]]

    def __enter__(self):
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.resume()
        self.shutdown()
        self.server_close()


DEMO_DOMAIN = "demo.example"
_DEMO_TEXTS = (
    "Heute war der CSD in unserer Stadt, und so viele queere Menschen haben gemeinsam gefeiert.",
    "Unser Jugendzentrum bietet ab Montag eine Beratung für trans Jugendliche und ihre Eltern an.",
    "Als lesbische Frau auf dem Land sichtbar zu sein, kostet manchmal Mut, aber es lohnt sich.",
    "Die Ausstellung zur Geschichte der schwulen Bewegung in Köln ist noch bis Ende des Monats offen.",
    "Ich bin nichtbinär und wünsche mir, dass Formulare endlich mehr als zwei Felder haben.",
)


def demo_instance(posts: int = 45) -> FakeInstance:
    """An instance of invented accounts: `posts` German posts on #queer (several pages), and one of each kind the
    crawler drops (opted out, #nobot in the bio, bot, #nsfw, English, an automated notice)."""
    start = datetime(2024, 5, 1, 12, tzinfo=timezone.utc)
    statuses = [status(1000 + i, f"<p>{_DEMO_TEXTS[i % len(_DEMO_TEXTS)]} (Beitrag {i + 1})</p>", domain=DEMO_DOMAIN,
                       created=start + timedelta(minutes=i), username=f"demo{i % 7 + 1}", tags=("queer",))
                for i in range(posts)]
    text = f"<p>{_DEMO_TEXTS[0]}</p>"
    statuses += [
        status(2001, text, domain=DEMO_DOMAIN, created=start, username="leise", indexable=False, tags=("queer",)),
        status(2002, text, domain=DEMO_DOMAIN, created=start, username="privat", tags=("queer",),
               note="<p>Bitte nicht sammeln #NoBot</p>"),
        status(2003, text, domain=DEMO_DOMAIN, created=start, username="botty", bot=True, tags=("queer",)),
        status(2004, text + "<p>#nsfw</p>", domain=DEMO_DOMAIN, created=start, username="demo1", tags=("queer", "nsfw")),
        status(2005, "<p>Today we celebrated pride with so many queer people.</p>", domain=DEMO_DOMAIN, created=start,
               username="demo2", language="en", tags=("queer",)),
        status(2006, "<p>Geplante Wartungsarbeiten heute Nacht. #queer</p>", domain=DEMO_DOMAIN, created=start,
               username="admin", tags=("queer",)),
    ]
    return FakeInstance(DEMO_DOMAIN, statuses, title="Demo-Instanz", rules=("Seid nett zueinander.",))


#: the demo instance holds its posts in memory and pages them 40 at a time: more is no better demo
MAX_POSTS = 10_000

DESCRIPTION = ("Serve a local Mastodon test instance (invented accounts, German posts, one of each kind the crawler "
               "drops) on 127.0.0.1 until Ctrl-C, to try the crawler without touching a real server.")


def main(argv: list[str] | None = None) -> int:
    """Serve the demo instance on 127.0.0.1 until Ctrl-C."""
    parser = argparse.ArgumentParser(prog="queerbias crawl test-server", description=DESCRIPTION)
    add_arguments(parser)
    return run(parser.parse_args(argv))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=cli_type(integer, "a port number", 0, 65535), default=0,
                        help="port on 127.0.0.1, 1 to 65535 (default: a free one)")
    parser.add_argument("--posts", type=cli_type(integer, "a whole number", 0, MAX_POSTS), default=45,
                        help=f"German posts on #queer, at most {MAX_POSTS:,} (default: %(default)s)")


def register(subparsers) -> None:
    """Add `test-server` to `queerbias crawl`."""
    p = subparsers.add_parser("test-server", help="serve a local Mastodon test instance for the crawler",
                              description=DESCRIPTION)
    add_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    server = FakeMastodonServer(demo_instance(args.posts), port=args.port)
    with server:
        print(f"Mastodon test instance {DEMO_DOMAIN} at {server.url} (Ctrl-C to stop). Try:\n"
              f"  queerbias crawl mastodon --out corpora/raw/test --contact you@example.org --instance {server.url} "
              "--tag queer", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            print("stopped", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
