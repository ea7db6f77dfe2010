"""robots.txt read as RFC 9309 says (its own examples, then both crawlers end to end), TDMRep locations as
path patterns, `noindex` addressed to our agent, and news items identified by feed and guid, each article
fetched once behind campaign links and canonical addresses."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from mastodon_scenario import GERMAN, T0
from websites import Site, article, rss

from queerbias.cli import main
from queerbias.crawl.mastodon.testserver import FakeInstance, FakeMastodonServer, status
from queerbias.crawl.robots import RobotsRules, pattern_covers

UA = "queerbias-test/1.0 (tests; contact: me@example.org)"

# RFC 9309, section 5.1 (the example robots.txt, its last line included).
RFC_EXAMPLE = """User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF
"""


@pytest.mark.parametrize("agent, path, allowed", [
    ("otherbot", "/x.gif", False), ("otherbot", "/example/a", False), ("otherbot", "/publications/a", True),
    ("otherbot", "/b", True), ("foobot", "/example/page.html", True), ("foobot", "/example/allowed.gif", True),
    ("foobot", "/b", False), ("FooBot/1.0", "/x.gif", False), ("barbot", "/example/page.html", False),
    ("bazbot", "/example/page.html", False), ("barbot", "/x.gif", True), ("quxbot", "/example/", True),
])
def test_the_rfcs_example(agent, path, allowed):
    assert RobotsRules(RFC_EXAMPLE).allowed(agent, path) is allowed


@pytest.mark.parametrize("text, path, allowed", [
    # 5.2: the longest match wins, and an allow wins a tie (2.2.2)
    ("User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n", "/example/page/", True),
    ("User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n",
     "/example/page/disallowed.gif", False),
    ("User-Agent: foobot\nAllow: /p\nDisallow: /p\n", "/p", True),
    # 2.2.1: two groups for one agent are combined
    ("user-agent: FooBot\ndisallow: /foo\n\nuser-agent: foobot\ndisallow: /baz\n", "/baz", False),
    ("user-agent: FooBot\ndisallow: /foo\n\nuser-agent: foobot\ndisallow: /baz\n", "/foo", False),
    # 2.2.3: special characters, and percent-encoded ones matched verbatim
    ("User-Agent: *\nDisallow: /this/path/exactly$\n", "/this/path/exactly", False),
    ("User-Agent: *\nDisallow: /this/path/exactly$\n", "/this/path/exactly/more", True),
    ("User-Agent: *\nDisallow: /this/*/exactly\n", "/this/a/b/exactly", False),
    ("User-Agent: *\nDisallow: /path/file-with-a-%2A.html\n", "/path/file-with-a-*.html", False),
    ("User-Agent: *\nDisallow: /path/foo-%24\n", "/path/foo-$", False),
    # 2.2.2: UTF-8 paths and encoded unreserved characters
    ("User-Agent: *\nDisallow: /foo/bar/ツ\n", "/foo/bar/%E3%83%84", False),
    ("User-Agent: *\nDisallow: /foo/bar/%62%61%7A\n", "/foo/bar/baz", False),
    ("User-Agent: *\nDisallow: /\n", "/robots.txt", True),  # 2.2.2: always allowed
    # what urllib.robotparser read wrongly
    ("\ufeffUser-Agent: *\nDisallow: /\n", "/a", False),
    ("User-Agent: foobot/0.1\nDisallow: /\n", "/a", False),
    ("User-Agent: foo\nDisallow: /\n", "/a", True),  # another product token, not a prefix of ours
])
def test_matching_as_rfc_9309_says(text, path, allowed):
    assert RobotsRules(text).allowed("foobot", path) is allowed


def _posts(domain: str) -> list[dict]:
    return [status(10 + i, f"<p>Nr. {i}: {GERMAN}</p>", domain=domain, created=T0 + timedelta(minutes=i),
                   tags=("queer",)) for i in range(2)]


# robots.txt files that shut out our crawler (or every crawler) at the API, as urllib.robotparser did not see
CLOSED = {
    "wildcard.example": "User-agent: *\nDisallow: /*\n",
    "api.example": "User-agent: *\nDisallow: /api/*\n",
    "bom.example": "\ufeffUser-agent: *\nDisallow: /api/\n",
    "groups.example": "User-agent: queerbias-crawler\nDisallow: /about\n\nUser-agent: queerbias-crawler\n"
                      "Disallow: /api/\n",
    "versioned.example": "User-agent: queerbias-crawler/0.1\nDisallow: /\n",
    "longest.example": "User-agent: *\nAllow: /api/\nDisallow: /api/v1/timelines/\n",
}


def test_the_mastodon_crawler_reads_robots_txt_as_rfc_9309(tmp_path, capsys):
    servers = [FakeMastodonServer(FakeInstance(d, _posts(d), robots=text)) for d, text in CLOSED.items()]
    servers.append(FakeMastodonServer(FakeInstance("open.example", _posts("open.example"),
                                                   robots="User-agent: *\nDisallow: /api/v1/admin/\n")))
    for server in servers:
        server.__enter__()
    try:
        args = ["crawl", "mastodon", "--out", str(tmp_path), "--tag", "queer", "--user-agent", UA]
        assert main([*args, *(a for s in servers for a in ("--instance", s.url))]) == 0
        printed = capsys.readouterr().out
        for server in servers[:-1]:
            assert f"{server.url}: skipped: its robots.txt disallows our crawler" in printed, server.instance.domain
            assert server.timeline_requests() == []
        assert f"{servers[-1].url}: complete" in printed
    finally:
        for server in servers:
            server.__exit__()


def test_news_honours_wildcards_tdmrep_locations_and_noindex_for_our_agent(tmp_path, capsys):
    with Site() as site, Site() as whole, Site() as other:
        site.routes["/robots.txt"] = (200, {"Content-Type": "text/plain"}, b"User-agent: *\nDisallow: /*.php$\n")
        site.routes["/.well-known/tdmrep.json"] = (200, {"Content-Type": "application/json"}, json.dumps(
            [{"location": "/artikel/", "tdm-reservation": 1}, {"location": "/", "tdm-reservation": 0}]).encode())
        whole.routes["/.well-known/tdmrep.json"] = (200, {"Content-Type": "application/json"}, json.dumps(
            [{"location": "/", "tdm-reservation": 1}]).encode())  # the spec's "reserve everything"
        pages = {
            "/seite.php": article("Queere Jugendzentren"),  # robots: /*.php$
            "/artikel/a.html": article("Queere Jugendzentren"),  # tdmrep: /artikel/
            "/meta.html": article("Queere Jugendzentren", '<meta name="queerbias-news" content="noindex">'),
            "/header.html": article("Queere Jugendzentren"),
            "/search-only.html": article("Queere Jugendzentren", '<meta name="robots" content="noindex">'
                                                                 '<link rel="canonical" href="http://[hostile">'),
        }
        for path, body in pages.items():
            site.routes[path] = (200, {"X-Robots-Tag": "queerbias-news: noindex"} if path == "/header.html" else {},
                                 body)
        whole.routes["/x.html"] = (200, {}, article("Queere Jugendzentren"))
        site.routes["/feed.xml"] = (200, {"Content-Type": "application/rss+xml"},
                                    rss([(f"g{i}", p) for i, p in enumerate(pages)]))
        whole.routes["/feed.xml"] = (200, {"Content-Type": "application/rss+xml"}, rss([("g", "/x.html")]))
        args = ["crawl", "news", "--out", str(tmp_path), "--delay", "0", "--user-agent", UA]
        for s in (site, whole, other):
            args += ["--allow-private-host", s.host]
        assert main([*args, "--feed", site.base + "/feed.xml", "--feed", whole.base + "/feed.xml"]) == 0
        printed = capsys.readouterr().out
        assert '"robots_disallowed": 1' in printed and '"tdm_reserved": 2' in printed and '"noindex": 2' in printed
        assert "/seite.php" not in site.requests and "/artikel/a.html" not in site.requests
        assert "/x.html" not in whole.requests
    kept = [json.loads(line)["url"] for line in (tmp_path / "news.jsonl").read_text().splitlines()]
    assert kept == [site.base + "/search-only.html"]  # a bare noindex is for search engines


def test_news_items_are_identified_by_feed_and_guid_and_fetched_once_behind_campaign_links(tmp_path, capsys):
    with Site() as one, Site() as two:
        canonical = f'<link rel="canonical" href="{one.base}/a.html">'
        one.routes["/a.html?utm_source=feed"] = (200, {}, article("Queere Jugendzentren", canonical))
        one.routes["/a.html?utm_medium=social&utm_campaign=x"] = (200, {}, article("Queere Jugendzentren", canonical))
        one.routes["/a.html"] = (200, {}, article("Queere Jugendzentren", canonical))
        one.routes["/b.html?id=7"] = (200, {}, article("Queere Jugendzentren", canonical))  # another path to a.html
        one.routes["/feed.xml"] = (200, {"Content-Type": "application/rss+xml"}, rss(
            [("1", "/a.html?utm_source=feed"), ("2", "/a.html?utm_medium=social&amp;utm_campaign=x"),
             ("3", "/a.html"), ("4", "/b.html?id=7")]))
        two.routes["/artikel.html"] = (200, {}, article("Trans Menschen feiern"))
        two.routes["/feed.xml"] = (200, {"Content-Type": "application/rss+xml"}, rss([("1", "/artikel.html")]))
        args = ["crawl", "news", "--out", str(tmp_path), "--delay", "0", "--user-agent", UA,
                "--allow-private-host", one.host, "--allow-private-host", two.host]
        assert main([*args, "--feed", one.base + "/feed.xml", "--feed", two.base + "/feed.xml"]) == 0
        capsys.readouterr()
        fetched = [p for p in one.requests if p.startswith(("/a.html", "/b.html"))]
    # asked without campaign tags, once; another address of the same article is recognised by its canonical link
    assert fetched == ["/a.html", "/b.html?id=7"]
    records = [json.loads(line) for line in (tmp_path / "news.jsonl").read_text().splitlines()]
    assert [r["url"] for r in records] == [one.base + "/a.html", two.base + "/artikel.html"]  # guid "1" twice
    assert len({r["doc_id"] for r in records}) == 2


def test_tdmrep_locations_are_path_prefixes_with_wildcards():
    assert pattern_covers("/", "/artikel/x.html") and pattern_covers("/artikel/", "/artikel/x.html")
    assert not pattern_covers("/artikel/", "/meinung/x.html") and pattern_covers("*.pdf$", "/a/b.pdf")
    assert not pattern_covers("/a.html$", "/a.html/x") and not pattern_covers("", "/a")
    assert not pattern_covers("/a\nDisallow: /", "/b")  # one line of a hostile file, not two
