"""Small web sites on 127.0.0.1 for the news crawler's hostile-site tests: routes, an article page, an RSS feed."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from mastodon_scenario import GERMAN


class Site:
    """A web site on 127.0.0.1: `routes` maps a path to (status, headers, body)."""

    def __init__(self):
        self.routes: dict[str, tuple[int, dict, bytes]] = {}
        self.requests: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's naming
                site.requests.append(self.path)
                code, headers, body = site.routes.get(self.path, (404, {}, b"not found"))
                self.send_response(code)
                for name, value in {"Content-Type": "text/html; charset=utf-8", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.host = self.base.removeprefix("http://")

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def article(title: str, head: str = "") -> bytes:
    """An article page; `head` goes into its <head> (meta tags, a canonical link)."""
    body = "".join(f"<p>{GERMAN} Satz {i} über queere Jugendzentren in der Stadt und ihre Zukunft.</p>"
                   for i in range(4))
    return f"<html lang='de'><head><title>{title}</title>{head}</head><body><article><h1>{title}</h1>{body}" \
           f"</article></body></html>".encode()


def rss(items: list[tuple[str, str]]) -> bytes:
    entries = "".join(f"<item><guid>{g}</guid><title>Queer</title><link>{link}</link></item>" for g, link in items)
    return f"<?xml version='1.0'?><rss version='2.0'><channel><title>T</title>{entries}</channel></rss>".encode()
