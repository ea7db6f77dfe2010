"""`crawl news` against real HTTP servers on 127.0.0.1: RSS and Atom feeds, article pages,
a hostile page, duplicates, robots.txt and AI-training opt-outs, internal addresses, back-off,
failures, and resuming."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from mastodon_scenario import Sleeps

from queerbias.cli import main as cli_main
from queerbias.crawl.news.crawler import NewsCrawler
from queerbias.crawl.news.extract import extract_article
from queerbias.crawl.news.feeds import parse_feed
from queerbias.crawl.news.http import Fetcher, FetchError
from queerbias.errors import DataError, QueerbiasError
from queerbias.text.keywords import KeywordMatcher

UA = "queerbias-test/1.0 (tests; contact: me@example.org)"
PARAGRAPHS = [
    "Die Stadt fördert queere Jugendzentren in den kommenden Jahren deutlich stärker als bisher.",
    "Nach Angaben der Verwaltung entstehen zwei neue Beratungsstellen für junge Menschen, die "
    "Diskriminierung in Schule, Familie oder Verein erleben.",
    "Initiativen begrüßten die Entscheidung, wiesen aber darauf hin, dass die Wartelisten schon "
    "heute lang sind und seit Jahren Personal fehlt.",
]
BORING = ["Der Stadtrat hat den Haushalt für das kommende Jahr beschlossen, nach langer Debatte.",
          "Die Opposition kritisierte die Pläne für den Straßenbau und die Sanierung der Schulen.",
          "Eine Entscheidung über die Finanzierung des Schwimmbads wurde auf Herbst vertagt."]


def page(title: str, paragraphs: list[str], junk: str = "") -> bytes:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (f"<!DOCTYPE html><html lang='de'><head><title>{title}</title></head><body>"
            f"<nav><a href='/'>Start</a> <a href='/x'>Politik</a></nav>{junk}"
            f"<article><h1>{title}</h1>{body}</article><footer>Impressum</footer></body></html>"
            ).encode("utf-8")


# A page built to hurt: scripts and styles full of keywords, a 1 MB attribute, deep nesting.
HOSTILE_JUNK = ("<script>document.write('schwul queer trans'); alert('pwned')</script>"
                "<style>body::after{content:'lesbisch'}</style>"
                f"<div data-x=\"{'x' * 1_000_000}\">Werbung</div>"
                + "<div>" * 200 + "tief" + "</div>" * 200
                + "<!-- queer im Kommentar --><iframe src='javascript:alert(1)'></iframe>")
SCRIPT_ONLY = (b"<html><body><script>var t = 'queer trans schwul lesbisch';</script>"
               b"<noscript>queer</noscript></body></html>")


def rss(items: list[tuple[str, str, str]]) -> bytes:
    entries = "".join(f"<item><guid isPermaLink='false'>{guid}</guid><title>{title}</title>"
                      f"<link>{link}</link><pubDate>Mon, 06 May 2024 10:00:00 GMT</pubDate></item>"
                      for guid, title, link in items)
    return (f"<?xml version='1.0' encoding='utf-8'?><rss version='2.0'><channel><title>Test</title>"
            f"<link>http://example.invalid/</link><language>de-de</language>{entries}"
            f"</channel></rss>").encode("utf-8")


def atom(base: str, entries: list[tuple[str, str, str]]) -> bytes:
    body = "".join(f"<entry><id>{i}</id><title>{t}</title><link href='{link}'/>"
                   f"<updated>2024-05-07T08:00:00Z</updated></entry>" for i, t, link in entries)
    return (f"<?xml version='1.0' encoding='utf-8'?><feed xmlns='http://www.w3.org/2005/Atom' "
            f"xml:lang='de'><title>Atom</title><id>{base}/atom</id>"
            f"<updated>2024-05-07T08:00:00Z</updated>{body}</feed>").encode("utf-8")


class Site:
    """A small web site in a thread; `routes` maps a path to (status, content type, body, headers)."""

    def __init__(self):
        self.routes: dict[str, tuple[int, str, bytes, dict]] = {}
        self.requests: list[tuple[str, str]] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's naming
                site.requests.append((self.path, self.headers.get("User-Agent", "")))
                status, ctype, body, headers = site.routes.get(
                    self.path, (404, "text/plain", b"not found", {}))
                time.sleep(headers.get("sleep", 0))
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers.items():
                    if name != "sleep":
                        self.send_header(name, value)
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout and size-limit tests)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.host = f"127.0.0.1:{self.server.server_address[1]}"  # allowed although it is loopback
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True,
                                       kwargs={"poll_interval": 0.05})

    def add(self, path: str, body: bytes, ctype: str = "text/html; charset=utf-8",
            status: int = 200, **headers) -> None:
        self.routes[path] = (status, ctype, body, headers)

    def fetched(self, path: str) -> int:
        return sum(1 for requested, _ in self.requests if requested == path)


@pytest.fixture
def site():
    site = Site()
    site.thread.start()
    site.add("/robots.txt", b"User-agent: *\nDisallow: /private/\n", "text/plain")
    site.add("/a/queer.html", page("Mehr Geld für queere Jugendzentren", PARAGRAPHS))
    site.add("/a/trans.html", page("Trans Menschen", [
        "Trans Menschen können ihren Geschlechtseintrag künftig beim Standesamt ändern.",
        *PARAGRAPHS[1:]]))
    site.add("/a/boring.html", page("Haushalt beschlossen", BORING))
    site.add("/a/hostile.html", page("Queeres Leben", PARAGRAPHS, junk=HOSTILE_JUNK))
    site.add("/a/script-only.html", SCRIPT_ONLY)
    site.add("/a/to-file", b"", status=302, Location="file:///etc/passwd")
    site.add("/private/secret.html", page("Queer geheim", PARAGRAPHS))
    site.add("/rss.xml", rss([
        ("g1", "Queere Jugendzentren", "/a/queer.html"),
        ("g2", "Haushalt", "/a/boring.html"),
        ("g3", "Nochmal verlinkt", "/a/queer.html#kommentare"),  # same link, other guid
        ("g1", "Gleiche GUID", "/a/other.html"),  # same guid, other link
        ("g4", "Feindselige Seite", "/a/hostile.html"),
        ("g5", "Gelöscht", "/a/missing.html"),
        ("g6", "Gesperrt", "/private/secret.html"),
        ("g7", "Umleitung", "/a/to-file"),
        ("g8", "Nur Skript", "/a/script-only.html"),
    ]), "application/rss+xml")
    site.add("/atom.xml", atom(site.base, [
        ("urn:a1", "Schon bekannt", f"{site.base}/a/queer.html"),  # same link, other feed
        ("urn:a2", "Trans Menschen", f"{site.base}/a/trans.html"),
    ]), "application/atom+xml")
    yield site
    site.server.shutdown()
    site.server.server_close()


def fetcher(site: Site, **options) -> Fetcher:
    return Fetcher(**{"user_agent": UA, "timeout": 5, "delay": 0, "allowed_hosts": [site.host], **options})


def crawl(site: Site, out: Path, feeds=("/rss.xml", "/atom.xml"), **options) -> NewsCrawler:
    crawler = NewsCrawler(fetcher(site, **options), KeywordMatcher(),
                          output=out / "news.jsonl", state_path=out / "state.json")
    crawler.run([site.base + feed for feed in feeds])
    return crawler


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "news.jsonl").read_text("utf-8").splitlines()]


def test_crawl_keeps_each_queer_article_once_with_provenance(site, tmp_path):
    crawler = crawl(site, tmp_path)

    docs = {Path(r["url"]).name: r for r in records(tmp_path)}
    assert sorted(docs) == ["hostile.html", "queer.html", "trans.html"]
    assert dict(crawler.counts) == {"feeds": 2, "kept": 3, "duplicate": 3, "no_keyword": 1,
                                    "fetch_failed": 2, "robots_disallowed": 1, "no_text": 1}
    queer = docs["queer.html"]
    assert queer["source"] == "news" and queer["kind"] == "article"
    assert queer["text"].split("\n\n") == ["Mehr Geld für queere Jugendzentren", *PARAGRAPHS]
    assert queer["provenance"]["feed"] == f"{site.base}/rss.xml"
    assert queer["provenance"]["guid"] == "g1" and queer["provenance"]["fetched_at"].endswith("+00:00")
    assert queer["published"] == "2024-05-06T10:00:00Z" and queer["language"] == "de-de"
    assert docs["trans.html"]["provenance"]["feed"] == f"{site.base}/atom.xml"
    assert docs["trans.html"]["keywords"] == ["Trans"]
    assert site.fetched("/a/queer.html") == 1 and site.fetched("/a/other.html") == 0
    assert site.fetched("/private/secret.html") == 0
    assert {agent for _, agent in site.requests} == {UA}


def test_hostile_page_yields_only_its_article_text(site, tmp_path):
    crawl(site, tmp_path)
    hostile = next(r for r in records(tmp_path) if r["url"].endswith("hostile.html"))

    assert hostile["text"].split("\n\n") == ["Queeres Leben", *PARAGRAPHS]
    for junk in ("document.write", "alert", "lesbisch", "xxxx", "Kommentar", "tief", "Impressum"):
        assert junk not in hostile["text"]
    # keywords inside scripts do not make a page relevant
    assert extract_article(SCRIPT_ONLY, "http://x.invalid/") is None
    # nesting beyond lxml's depth limit truncates the page instead of exhausting memory
    deep = page("Queer", PARAGRAPHS, junk="<div>" * 100_000 + "tief")
    assert "tief" not in (extract_article(deep, "http://x.invalid/") or "")


def test_rerun_fetches_only_new_items(site, tmp_path):
    crawl(site, tmp_path)
    before = (tmp_path / "news.jsonl").read_bytes()
    site.requests.clear()

    again = crawl(site, tmp_path)
    assert (tmp_path / "news.jsonl").read_bytes() == before
    assert [path for path, _ in site.requests] == ["/robots.txt", "/rss.xml", "/atom.xml"]
    assert again.counts["duplicate"] == 11  # every item of both feeds

    site.add("/a/neu.html", page("Schwule Väter", ["Zwei schwule Väter erzählen, wie ihre "
                                                   "Familie im Dorf aufgenommen wurde.", *BORING]))
    site.add("/atom.xml", atom(site.base, [("urn:a3", "Neu", f"{site.base}/a/neu.html")]),
             "application/atom+xml")
    site.requests.clear()
    crawl(site, tmp_path, feeds=("/atom.xml",))
    assert [path for path, _ in site.requests] == ["/robots.txt", "/atom.xml", "/.well-known/tdmrep.json",
                                                   "/a/neu.html"]
    assert len(records(tmp_path)) == 4


def test_resume_after_crash_between_record_and_state(site, tmp_path):
    crawl(site, tmp_path)
    kept = records(tmp_path)
    # Crash simulation: state lost after the records were flushed, plus a torn last line.
    (tmp_path / "state.json").unlink()
    with open(tmp_path / "news.jsonl", "a", encoding="utf-8") as handle:
        handle.write('{"doc_id": "news:torn", "text": "Queer')
    site.requests.clear()

    crawl(site, tmp_path)

    assert records(tmp_path) == kept  # torn line cut off, nothing written twice
    assert site.fetched("/a/queer.html") == 0 and site.fetched("/a/boring.html") == 1
    state = json.loads((tmp_path / "state.json").read_text("utf-8"))
    assert f"guid:{site.base}/rss.xml g2" in state["seen"] and f"link:{site.base}/a/trans.html" in state["seen"]


def test_transient_failures_are_retried_next_run(site, tmp_path):
    site.add("/a/trans.html", b"busy", "text/plain", status=503)
    first = crawl(site, tmp_path, feeds=("/atom.xml",))
    assert first.counts["retry_later"] == 1 and len(records(tmp_path)) == 1

    site.add("/a/trans.html", page("Trans Menschen", ["Trans Menschen feiern.", *PARAGRAPHS]))
    second = crawl(site, tmp_path, feeds=("/atom.xml",))
    assert second.counts["kept"] == 1 and len(records(tmp_path)) == 2


def test_robots_txt_failures(site, tmp_path):
    site.add("/robots.txt", b"oops", "text/plain", status=503)
    unreachable = crawl(site, tmp_path / "a", feeds=("/atom.xml",))
    # The site's wishes are unknown: not even its feed is fetched, and the next run asks again.
    assert list(unreachable.failed_feeds) == [site.base + "/atom.xml"]
    assert site.fetched("/atom.xml") == 0 and site.fetched("/a/trans.html") == 0
    assert site.fetched("/robots.txt") == 1  # asked once per run, not once per item

    site.add("/robots.txt", b"no", "text/plain", status=404)  # 4xx: no rules
    assert crawl(site, tmp_path / "b", feeds=("/atom.xml",)).counts["kept"] == 2


def test_fetcher_limits(site):
    limited = fetcher(site, max_bytes=1000)
    site.add("/big", b"x" * 1001, "text/plain")
    site.add("/slow", b"late", "text/plain", sleep=1.5)

    with pytest.raises(FetchError, match="larger than 1000 bytes") as big:
        limited.get(site.base + "/big")
    assert big.value.retry is False
    # Only the request that must time out gets the short deadline (a slower machine only makes it surer).
    with pytest.raises(FetchError, match="network error: no complete answer within 0.5 s") as slow:
        fetcher(site, timeout=0.5).get(site.base + "/slow")
    assert slow.value.retry is True
    with pytest.raises(FetchError, match="only absolute http"):
        limited.get("file:///etc/passwd")
    site.add("/to-ftp", b"", status=301, Location="ftp://127.0.0.1/x")
    for hop in ("/a/to-file", "/to-ftp"):  # urllib refuses file://, our handler ftp://
        with pytest.raises(FetchError, match="not allowed|only absolute http") as redirect:
            limited.get(site.base + hop)
        assert redirect.value.retry is False
    assert limited.get(site.base + "/robots.txt").body.startswith(b"User-agent")


def test_politeness_delay_spaces_requests_to_one_host(site):
    now, waits = [100.0], []  # a clock that moves only when slept on, or when the test moves it

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    polite = fetcher(site, delay=0.2, sleep=sleep, clock=lambda: now[0])
    for _ in range(2):
        polite.get(site.base + "/robots.txt")
    now[0] += 0.15  # time that passed since the last request counts towards the delay
    polite.get(site.base + "/robots.txt")
    assert waits == pytest.approx([0.2, 0.05])


def test_feed_bytes_are_never_opened_as_a_path(tmp_path):
    secret = tmp_path / "secret.xml"
    secret.write_bytes(rss([("s", "Queer", "http://x.invalid/s")]))
    with pytest.raises(DataError, match="not an RSS/Atom feed"):
        parse_feed(str(secret).encode(), "http://x.invalid/feed")


def test_cli_exit_codes(site, tmp_path, capsys):
    args = ["crawl", "news", "--out", str(tmp_path), "--delay", "0", "--user-agent", UA,
            "--allow-private-host", site.host]
    assert cli_main([*args, "--feed", site.base + "/atom.xml"]) == 0
    assert "news: 2 new articles" in capsys.readouterr().out

    assert cli_main([*args, "--feed", site.base + "/atom.xml", "--feed", site.base + "/nope"]) == 1
    assert "HTTP 404" in capsys.readouterr().err
    assert cli_main([*args, "--feed", site.base + "/a/queer.html"]) == 2  # HTML is not a feed
    assert "every feed failed" in capsys.readouterr().err


def one_item_feed(site: Site, link: str) -> None:
    site.add("/one.xml", rss([("o1", "Queere Jugendzentren", link)]), "application/rss+xml")


@pytest.mark.parametrize("robots", [
    "User-agent: GPTBot\nDisallow: /a/\n",
    "User-agent: CCBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n",
    "User-agent: Google-Extended\nDisallow: /a/queer.html\n",
    "User-agent: queerbias-test\nDisallow: /a/\n",
    "User-agent: queerbias-news\nDisallow: /a/\n",  # the project's names bind a custom --user-agent too
    "User-agent: queerbias-crawler\nDisallow: /a/\n",
    "User-agent: ClaudeBot\nDisallow: /a/\n",
])
def test_ai_training_robots_groups_are_honoured(site, tmp_path, robots):
    site.add("/robots.txt", robots.encode(), "text/plain")
    one_item_feed(site, "/a/queer.html")
    crawler = crawl(site, tmp_path, feeds=("/one.xml",))
    assert site.fetched("/a/queer.html") == 0 and crawler.counts["kept"] == 0
    assert crawler.counts["robots_disallowed"] == 1 or crawler.failed_feeds  # "Disallow: /" covers the feed too


def test_robots_txt_is_checked_for_the_feed_itself(site, tmp_path):
    site.add("/robots.txt", b"User-agent: *\nDisallow: /rss.xml\n", "text/plain")
    crawler = crawl(site, tmp_path, feeds=("/rss.xml",))
    assert "robots.txt disallows this feed" in crawler.failed_feeds[site.base + "/rss.xml"]
    assert site.fetched("/rss.xml") == 0


@pytest.mark.parametrize("meta, headers, outcome", [
    ('<meta name="robots" content="noai, noimageai">', {}, "ai_opt_out"),
    ('<meta name="ROBOTS" content="noimageai">', {}, "ai_opt_out"),
    ('<meta name="GPTBot" content="noai">', {}, "ai_opt_out"),
    ("", {"X-Robots-Tag": "noai"}, "ai_opt_out"),
    ("", {"X-Robots-Tag": "queerbias-test: noindex, noai"}, "ai_opt_out"),
    ("", {"tdm-reservation": "1"}, "tdm_reserved"),
    ('<meta name="tdm-reservation" content="1">', {}, "tdm_reserved"),
    ('<meta name="robots" content="index, follow">', {"X-Robots-Tag": "noarchive"}, "kept"),
])
def test_page_level_ai_opt_outs_are_honoured(site, tmp_path, meta, headers, outcome):
    site.add("/a/q.html", page("Queere Jugendzentren", PARAGRAPHS).replace(b"<head>", f"<head>{meta}".encode()),
             **headers)
    one_item_feed(site, "/a/q.html")
    crawler = crawl(site, tmp_path, feeds=("/one.xml",))
    assert crawler.counts[outcome] == 1
    assert len(records(tmp_path)) == (outcome == "kept")


def test_tdmrep_well_known_file_reserves_matching_paths_before_they_are_fetched(site, tmp_path):
    site.add("/.well-known/tdmrep.json", json.dumps([
        {"location": "/a/*", "tdm-reservation": 1, "tdm-policy": "https://example.org/policy"},
        {"location": "/*", "tdm-reservation": 0}]).encode(), "application/json")
    site.add("/b/queer.html", page("Mehr Geld für queere Jugendzentren", PARAGRAPHS))
    site.add("/two.xml", rss([("t1", "Queer", "/a/queer.html"), ("t2", "Queer", "/b/queer.html")]),
             "application/rss+xml")
    crawler = crawl(site, tmp_path, feeds=("/two.xml",))
    assert crawler.counts["tdm_reserved"] == 1 and crawler.counts["kept"] == 1
    assert site.fetched("/a/queer.html") == 0 and site.fetched("/.well-known/tdmrep.json") == 1


def test_crawl_delay_spaces_requests_and_a_huge_one_skips_the_site(site, tmp_path):
    site.add("/two.xml", rss([("t1", "Queer", "/a/queer.html"), ("t2", "Trans", "/a/trans.html")]),
             "application/rss+xml")
    site.add("/robots.txt", b"User-agent: *\nCrawl-delay: 7\n", "text/plain")
    sleeps = Sleeps()
    crawler = crawl(site, tmp_path / "a", feeds=("/two.xml",), sleep=sleeps)
    assert crawler.counts["kept"] == 2
    assert len(sleeps) >= 3 and all(6.5 < s <= 7 for s in sleeps)  # each request after robots.txt waits

    site.add("/robots.txt", b"User-agent: GPTBot\nCrawl-delay: 86400\n", "text/plain")
    site.requests.clear()
    crawler = crawl(site, tmp_path / "b", feeds=("/two.xml",), sleep=Sleeps())
    assert list(crawler.failed_feeds) == [site.base + "/two.xml"] and site.fetched("/two.xml") == 0


def test_a_host_that_answers_429_is_left_alone_as_long_as_it_asks(site, tmp_path):
    site.add("/three.xml", rss([("t1", "Queer", "/a/queer.html"), ("t2", "Trans", "/a/trans.html"),
                                ("t3", "Queer", "/a/hostile.html")]), "application/rss+xml")
    site.add("/a/queer.html", b"slow down", "text/plain", status=429, **{"Retry-After": "600"})
    sleeps = Sleeps()
    crawler = crawl(site, tmp_path, feeds=("/three.xml",), sleep=sleeps)
    assert crawler.counts["retry_later"] == 1 and crawler.counts["host_backoff"] == 2
    assert site.fetched("/a/trans.html") == 0 and site.fetched("/a/hostile.html") == 0  # none in the window
    assert sleeps == []  # not waited out either: left for a later run, unmarked

    site.add("/a/queer.html", page("Mehr Geld für queere Jugendzentren", PARAGRAPHS))
    assert crawl(site, tmp_path, feeds=("/three.xml",)).counts["kept"] == 3

    site.add("/a/trans.html", b"busy", "text/plain", status=429, **{"Retry-After": "30"})
    sleeps = Sleeps()
    site.add("/four.xml", rss([("f1", "Trans", "/a/trans.html"), ("f2", "Queer", "/a/boring.html")]),
             "application/rss+xml")
    crawl(site, tmp_path / "short", feeds=("/four.xml",), sleep=sleeps)
    assert any(29 < s <= 30 for s in sleeps)  # a short wait is waited out


@pytest.fixture
def internal():
    """A second server on 127.0.0.1 that the crawler was NOT allowed to reach."""
    server = Site()
    server.thread.start()
    server.add("/secret.html", page("Queer intern", PARAGRAPHS))
    yield server
    server.server.shutdown()
    server.server.server_close()


def test_private_loopback_and_link_local_addresses_are_never_fetched(site, internal, tmp_path):
    port = internal.server.server_address[1]
    site.add("/to-internal", b"", status=302, Location=f"{internal.base}/secret.html")
    site.add("/inside.xml", rss([
        ("i1", "Queer", f"{internal.base}/secret.html"),          # a loopback address literal
        ("i2", "Queer", f"http://localhost:{port}/secret.html"),  # a name that resolves to loopback
        ("i3", "Queer", "http://10.0.0.1/secret.html"),           # private
        ("i4", "Queer", "http://169.254.169.254/latest/meta-data/"),  # cloud metadata, link-local
        ("i5", "Queer", "/to-internal"),                          # an allowed site redirecting inside
    ]), "application/rss+xml")
    crawler = crawl(site, tmp_path, feeds=("/inside.xml",))
    assert crawler.counts["private_address"] == 5
    assert internal.requests == [] and (tmp_path / "news.jsonl").read_bytes() == b""


def test_article_text_is_scrubbed_and_outputs_are_private(site, tmp_path):
    site.add("/a/contact.html", page("Queere Beratung", [
        PARAGRAPHS[0], "Kontakt: beratung@queer-zentrum.de oder 030 1234567, auf Mastodon @beratung@queer.social.",
        *PARAGRAPHS[1:]]))
    one_item_feed(site, "/a/contact.html")
    crawl(site, tmp_path / "out", feeds=("/one.xml",))
    [doc] = records(tmp_path / "out")
    assert "Kontakt: <email> oder <phone>, auf Mastodon <user>." in doc["text"]
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o700
    assert {p.name: p.stat().st_mode & 0o777 for p in (tmp_path / "out").iterdir()} == {
        "news.jsonl": 0o600, "state.json": 0o600, ".lock": 0o600}


def test_news_needs_a_contact_and_refuses_a_mastodon_state(site, tmp_path, capsys):
    with pytest.raises(QueerbiasError, match="has no contact"):
        Fetcher(user_agent="queerbias-news/0.1 (research)")
    base = ["crawl", "news", "--out", str(tmp_path / "out"), "--feed", site.base + "/atom.xml"]
    assert cli_main(base) == 2
    assert "needs a contact so that admins can reach you" in capsys.readouterr().err
    mastodon = tmp_path / "mastodon"
    mastodon.mkdir()
    (mastodon / "state.json").write_text(json.dumps({"kind": "queerbias-mastodon-crawl", "version": 2,
                                                     "instances": {}}))
    assert cli_main([*base, "--out", str(mastodon), "--contact", "me@example.org",
                     "--allow-private-host", site.host]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "belongs to a Mastodon crawl" in err and "KeyError" not in err
