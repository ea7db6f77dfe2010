"""The crawler against fake instances over real HTTP, with the real Mastodon.py client."""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta

from fake_mastodon import FakeInstance, FakeMastodonServer, status
from mastodon_scenario import (  # noqa: F401
    BOOSTED_URI,
    GERMAN,
    SHARED_URI,
    T0,
    Sleeps,
    read_posts,
    run_crawl,
    servers,
)


def test_two_instances_dedupe_filter_and_clean(servers, tmp_path):
    a, b = servers
    stats = run_crawl(tmp_path, a.url, b.url)
    posts = read_posts(tmp_path)
    by_uri = {p["uri"]: p for p in posts}
    assert len(by_uri) == len(posts)  # every post once

    # The shared post (different local ids) is kept once and seen on both instances.
    assert sorted(by_uri[SHARED_URI]["seen_on"]) == sorted([a.url[7:], b.url[7:]])
    assert stats["duplicates"] == 1
    # The boost was unwrapped to the original from the third server.
    assert by_uri[BOOSTED_URI]["origin_instance"] == "c.example"
    assert by_uri[BOOSTED_URI]["keywords"] == ["Queer", "Lesbisch"]

    a_stats = stats["instances"][a.url]
    assert a_stats["status"] == "complete"
    assert a_stats["dropped"] == {"bot": 1, "nsfw": 1, "opted_out": 3, "not_german": 1, "no_keyword": 1,
                                  "automated": 1}
    assert a_stats["fetched"] == 41 + 1  # 41 posts on #queer, one on #nichtbinär
    b_stats = stats["instances"][b.url]
    # Whichever thread commits the shared post first keeps it; the other counts a duplicate.
    assert a_stats["kept"] + a_stats["duplicates"] == 30 + 4  # 30 plain + shared + CW + cleaned + nichtbinär
    assert a_stats["kept"] + b_stats["kept"] == len(posts)
    assert a_stats["duplicates"] + b_stats["duplicates"] == 1
    assert a_stats["words"] > 0 and a_stats["bytes"] >= a_stats["words"]
    assert a_stats["probe"]["version"] == "4.4.0" and a_stats["probe"]["rules"] == ["Keine Diskriminierung."]
    assert stats["posts"] == len(posts) == 34 + 2  # b adds the boost and the schwul post

    # Umlaut tags travel percent-encoded, and pages follow the Link header's max_id.
    assert any("/timelines/tag/nichtbin%C3%A4r" in path for path in a.timeline_requests())
    assert any("max_id=" in path for path in a.timeline_requests())

    # Content warnings are no reason to drop; cleaning removed links, mentions, :emoji: and stray tags.
    texts = {p["text"] for p in posts}
    assert GERMAN in texts
    cleaned = next(p["text"] for p in posts if "Köln" in p["text"])
    assert cleaned == "Hallo schau mal: 🏳️‍🌈 Queere Geschichte in Köln ist spannend und wird viel zu selten " \
                      "erzählt.\n\n#queer"
    record = by_uri[SHARED_URI]
    assert set(record) == {"doc_id", "uri", "url", "origin_instance", "created_at", "language", "text", "tags",
                           "keywords", "account", "seen_on"}
    assert record["created_at"].startswith("2024-05-01T13:40:00") and record["language"] == "de"
    assert len(record["account"]) == 24 and "alice" not in record["account"]
    # Same person on two servers: same pseudonym; another person: another one.
    assert record["account"] == by_uri["https://a.example/users/alice/statuses/1000"]["account"]
    assert record["account"] != by_uri[BOOSTED_URI]["account"]

    on_disk = json.loads((tmp_path / "stats.json").read_text())
    assert on_disk["instances"][a.url]["kept"] == a_stats["kept"]
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["instances"][a.url]["cursors"]["tag:queer"] == {"newest_id": "1111"}


def test_rate_limit_and_server_error_are_retried(tmp_path):
    inst = FakeInstance("a.example", [status(10 + i, f"<p>{GERMAN}</p>", domain="a.example",
                                             created=T0 + timedelta(minutes=i), tags=("queer",)) for i in range(5)])
    inst.faults = [("/api/v1/timelines/tag/queer", 429), ("/api/v1/timelines/tag/queer", 500)]
    sleeps = Sleeps()
    with FakeMastodonServer(inst) as server:
        stats = run_crawl(tmp_path, server.url, sleeps=sleeps)
    assert stats["instances"][server.url]["status"] == "complete"
    assert stats["posts"] == 5
    # A wait for the announced reset (about 1 s), then the backoff of a 2nd attempt (2 x 0.5 s) after the 500.
    assert len(sleeps) == 2 and 0 < sleeps[0] <= 2.5 and sleeps[1] == 1.0  # Date has 1 s resolution
    assert stats["instances"][server.url]["requests"] == len(server.requests)


def test_retries_are_bounded(tmp_path):
    inst = FakeInstance("a.example", [])
    inst.faults = [("/api/v1/timelines/tag/queer", 503)] * 5
    sleeps = Sleeps()
    with FakeMastodonServer(inst) as server:
        stats = run_crawl(tmp_path, server.url, sleeps=sleeps)
    feeds = stats["instances"][server.url]["feeds"]
    assert feeds["tag:queer"].startswith("failed: RetriesExhausted") or "503" in feeds["tag:queer"]
    assert feeds["tag:nichtbinär"] == "complete"  # the next feed still ran
    assert sleeps == [0.5, 1.0]  # three attempts, two backoffs


def test_login_only_and_disabled_feeds_are_reported_not_empty(servers, tmp_path):
    a, _ = servers
    login_only = FakeInstance("login.example", [status(1, f"<p>{GERMAN}</p>", domain="login.example",
                                                       created=T0, tags=("queer",))], hashtag_feeds="authenticated")
    old_login_only = FakeInstance("old.example", [], hashtag_feeds="authenticated", advertise_feed_access=False)
    disabled = FakeInstance("off.example", [], hashtag_feeds="disabled")
    with FakeMastodonServer(login_only) as c, FakeMastodonServer(old_login_only) as d, \
            FakeMastodonServer(disabled) as e:
        stats = run_crawl(tmp_path, a.url, c.url, d.url, e.url, local_timeline=True)
        for server in (c, e):  # only the live feed was asked for posts
            assert [p.split("?")[0] for p in server.timeline_requests()] == ["/api/v1/timelines/public"]
            assert "local=1" in server.timeline_requests()[0]
    per = stats["instances"]
    assert per[c.url]["feeds"] == {"tag:queer": "login_required", "tag:nichtbinär": "login_required",
                                   "local": "complete"}
    assert per[c.url]["probe"]["hashtag_feeds"] == "login_required"
    # Without the probe's hint, the 422 answer itself says "login required".
    assert per[d.url]["probe"]["hashtag_feeds"] == "unknown"
    assert per[d.url]["feeds"]["tag:queer"] == "login_required"
    assert per[e.url]["feeds"]["tag:queer"] == "disabled"
    assert per[a.url]["kept"] == 34  # b is not crawled here, so a keeps the shared post


def test_unreachable_instance_does_not_stop_the_others(servers, tmp_path):
    a, b = servers
    with FakeMastodonServer(FakeInstance("gone.example")) as gone:
        dead_url = gone.url
    stats = run_crawl(tmp_path, dead_url, a.url, b.url)
    assert stats["instances"][dead_url]["status"].startswith("probe failed: RetriesExhausted")
    assert stats["instances"][a.url]["status"] == "complete"
    assert stats["posts"] == 36


def test_second_run_fetches_only_what_is_new(servers, tmp_path):
    a, b = servers
    run_crawl(tmp_path, a.url, b.url)
    first = read_posts(tmp_path)
    a.instance.statuses.append(status(2000, f"<p>Neu: {GERMAN}</p>", domain="a.example",
                                      created=T0 + timedelta(days=1), tags=("queer",)))
    before = len(a.requests)
    stats = run_crawl(tmp_path, a.url, b.url)
    later = a.timeline_requests()[-2:]
    assert all("since_id=" in path for path in later)
    # instance v2 + terms (probe), v2 again (Mastodon.py's own feed check, once per client), one page per feed
    assert len(a.requests) - before == 5
    posts = read_posts(tmp_path)
    assert posts[: len(first)] == first and len(posts) == len(first) + 1
    assert stats["posts"] == len(posts) and stats["duplicates"] == 1


def test_since_stops_paging_at_the_cut_off(servers, tmp_path):
    a, b = servers
    stats = run_crawl(tmp_path, a.url, since=T0 + timedelta(minutes=100))
    assert stats["instances"][a.url]["fetched"] == 12  # ids 1100..1111; 1109 is on #nichtbinär
    assert sum("max_id=" in p for p in a.timeline_requests()) == 1
    assert min(p["created_at"] for p in read_posts(tmp_path)) >= "2024-05-01T13:40"


def test_request_budget_stops_and_the_next_run_resumes(servers, tmp_path):
    a, b = servers
    stats = run_crawl(tmp_path / "ref", a.url, b.url)
    reference = {p["uri"]: p for p in read_posts(tmp_path / "ref")}
    out = tmp_path / "budget"
    runs = 0
    while True:
        runs += 1
        stats = run_crawl(out, a.url, b.url, max_requests=5)  # a run needs 5 at least
        if all(i["status"] == "complete" for i in stats["instances"].values()):
            break
        assert stats["instances"][a.url]["status"] == "request budget used up; rerun to continue"
        assert runs < 20
    posts = read_posts(out)
    assert runs >= 3
    assert len(posts) == len({p["uri"] for p in posts}) == len(reference)
    assert {p["uri"]: sorted(p["seen_on"]) for p in posts} == {u: sorted(p["seen_on"]) for u, p in reference.items()}
    assert Counter(stats["instances"][a.url]["dropped"]) == Counter(
        {"bot": 1, "nsfw": 1, "opted_out": 3, "not_german": 1, "no_keyword": 1, "automated": 1})
