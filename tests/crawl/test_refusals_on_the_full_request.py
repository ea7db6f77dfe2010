"""Issue 48, refusals: robots.txt and TDMRep judge the whole request, path and query, as RFC 9309 (section
2.2.2) matches them; a 429 on robots.txt leaves a site's wishes unknown; a server's reason reaches no terminal
or file with its escape sequences.

Fake Mastodon servers and small web sites on 127.0.0.1, the real Mastodon.py client and the real CLI.
"""

from __future__ import annotations

import json
from datetime import timedelta

from mastodon_scenario import GERMAN, T0, UA, read_posts
from websites import Site, article, rss

from queerbias.cli import main
from queerbias.crawl.mastodon.testserver import FakeInstance, FakeMastodonServer, status


def _instance(domain: str, posts: int = 3, **options) -> FakeInstance:
    return FakeInstance(domain, [status(10 + i, f"<p>Nr. {i}: {GERMAN}</p>", domain=domain,
                                        created=T0 + timedelta(minutes=i), tags=("queer",)) for i in range(posts)],
                        **options)


def _crawl(out, *servers, page_size: int | None = None) -> int:
    return main(["crawl", "mastodon", "--out", str(out), "--tag", "queer", "--user-agent", UA,
                 *(a for s in servers for a in ("--instance", s.url))])


def test_robots_txt_is_asked_about_the_query_every_request_carries(tmp_path, capsys):
    queries = _instance("queries.example", robots="User-agent: *\nDisallow: /*?\n")
    paging = _instance("paging.example", posts=45, robots="User-agent: queerbias-crawler\nDisallow: /*max_id=\n")
    with FakeMastodonServer(queries) as q, FakeMastodonServer(paging) as p:
        assert _crawl(tmp_path, q, p) == 0
        printed = capsys.readouterr().out
        assert f"{q.url}: skipped: its robots.txt disallows our crawler at the API" in printed
        assert q.timeline_requests() == []
        # The first page of a feed carries no cursor and is fetched; the next one would, and is not asked for.
        assert len(p.timeline_requests()) == 1 and "max_id" not in p.timeline_requests()[0]
    feeds = json.loads((tmp_path / "stats.json").read_text())["instances"][p.url]["feeds"]
    assert feeds == {"tag:queer": "robots_disallowed"} and len(read_posts(tmp_path)) == 40


def test_a_429_on_robots_txt_leaves_the_wishes_unknown_and_the_instance_uncrawled(tmp_path, capsys):
    busy = _instance("busy.example")
    busy.raw["/robots.txt"] = (429, {"Retry-After": "1", "Content-Type": "text/plain"}, b"Too many requests")
    with FakeMastodonServer(busy) as server:
        assert _crawl(tmp_path, server) == 0
        assert server.timeline_requests() == []
    assert "skipped: its robots.txt could not be read, so its wishes are unknown" in capsys.readouterr().out


def test_a_servers_escape_sequences_reach_neither_the_terminal_nor_stats_json(tmp_path, capsys):
    hostile = _instance("ansi.example")
    reason = "Forbidden\x1b[2J\x1b]0;pwned\x07\x9b31m"  # a status line is Latin-1
    hostile.raw["/api/v2/instance"] = (403, {"Content-Type": "application/json"},
                                       json.dumps({"error": "nein\x1b[31m rot\x07\x1b[0m\u202e"}).encode(), reason)
    with FakeMastodonServer(hostile) as server:
        assert _crawl(tmp_path, server) == 2  # the only instance could not be probed
    printed = capsys.readouterr()
    stats = (tmp_path / "stats.json").read_text()
    assert "probe failed: MastodonAPIError 403: Forbidden nein rot;" in printed.out  # what was readable stays
    for text in (printed.out, printed.err, stats):
        assert not any(ch in text for ch in "\x1b\x07\x9b\u202e"), repr(text)


def test_a_tdmrep_location_with_a_query_reserves_what_it_names(tmp_path, capsys):
    with Site() as site:
        site.routes["/.well-known/tdmrep.json"] = (200, {"Content-Type": "application/json"}, json.dumps(
            [{"location": "/index.php?artikel=*", "tdm-reservation": 1}]).encode())
        site.routes["/index.php?artikel=7"] = (200, {}, article("Queere Jugendzentren"))
        site.routes["/index.php?seite=7"] = (200, {}, article("Trans Menschen feiern"))
        site.routes["/feed.xml"] = (200, {"Content-Type": "application/rss+xml"},
                                    rss([("a", "/index.php?artikel=7"), ("s", "/index.php?seite=7")]))
        assert main(["crawl", "news", "--out", str(tmp_path), "--delay", "0", "--user-agent", UA,
                     "--allow-private-host", site.host, "--feed", site.base + "/feed.xml"]) == 0
        assert '"tdm_reserved": 1' in capsys.readouterr().out
        assert "/index.php?artikel=7" not in site.requests and "/index.php?seite=7" in site.requests
