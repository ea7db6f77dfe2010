"""The crawler against fake instances over real HTTP, with the real Mastodon.py client."""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta

import pytest
from mastodon_scenario import (  # noqa: F401
    BOOSTED_URI,
    GERMAN,
    SHARED_URI,
    T0,
    Sleeps,
    assert_names_nobody,
    read_posts,
    run_crawl,
    servers,
)

from queerbias.crawl.mastodon.client import RetryPolicy
from queerbias.crawl.mastodon.crawler import crawl
from queerbias.crawl.mastodon.settings import CrawlSettings
from queerbias.crawl.mastodon.testserver import FakeInstance, FakeMastodonServer, Fediverse, status

A_DROPPED = {"bot": 1, "nsfw": 1, "opted_out": 3, "not_german": 1, "no_keyword": 1, "automated": 1}


def _posts(domain: str, n: int, start: int = 10, tag: str = "queer", **kwargs) -> list[dict]:
    return [status(start + i, f"<p>Nr. {i}: {GERMAN}</p>", domain=domain, created=T0 + timedelta(minutes=i),
                   tags=(tag,), **kwargs) for i in range(n)]


def test_two_instances_dedupe_filter_clean_and_name_nobody(servers, tmp_path):
    a, b = servers
    stats = run_crawl(tmp_path, a.url, b.url)
    posts = read_posts(tmp_path)
    assert len({p["doc_id"] for p in posts}) == len(posts)  # every post once

    # Nothing in any output file names a person or a post's address.
    assert_names_nobody(tmp_path)
    record = posts[0]
    assert set(record) == {"doc_id", "account", "created_at", "language", "text", "tags", "keywords", "seen_on"}
    assert record["doc_id"].startswith("mastodon:") and len(record["account"]) == 24

    # The shared post (different local ids) is kept once, and seen on both instances.
    assert Counter(len(p["seen_on"]) for p in posts) == {1: len(posts) - 1, 2: 1}
    assert stats["duplicates"] == 1
    a_stats, b_stats = stats["instances"][a.url], stats["instances"][b.url]
    assert a_stats["status"] == "complete"
    assert a_stats["dropped"] == A_DROPPED
    assert a_stats["fetched"] == 41 + 1  # 41 posts on #queer, one on #nichtbinär
    # Whichever thread commits the shared post first keeps it; the other counts a duplicate.
    assert a_stats["kept"] + a_stats["duplicates"] == 30 + 4  # 30 plain + shared + CW + cleaned + nichtbinär
    assert a_stats["kept"] + b_stats["kept"] == len(posts) == stats["posts"] == 34 + 2
    assert a_stats["probe"]["version"] == "4.4.0" and a_stats["probe"]["rules"] == ["Keine Diskriminierung."]
    # stats.json holds counts, not contacts
    assert "admin@" not in (tmp_path / "stats.json").read_text() and "contact" not in a_stats["probe"]

    # Umlaut tags travel percent-encoded, and pages follow the Link header's max_id.
    assert any("/timelines/tag/nichtbin%C3%A4r" in path for path in a.timeline_requests())
    assert any("max_id=" in path for path in a.timeline_requests())

    # Content warnings are no reason to drop; cleaning removed links and :emoji:, mentions became placeholders.
    texts = {p["text"] for p in posts}
    assert GERMAN in texts
    cleaned = next(p["text"] for p in posts if "Köln" in p["text"])
    assert cleaned == "Hallo <user> schau mal: 🏳️‍🌈 Queere Geschichte in Köln ist spannend und wird viel zu " \
                      "selten erzählt.\n\n#queer"
    # Same person on two servers: same pseudonym; another person: another one.
    boosted = next(p for p in posts if "Lesbische" in p["text"])
    assert boosted["keywords"] == ["Queer", "Lesbisch"]
    alice = {p["account"] for p in posts if p["text"].startswith("Beitrag") or p["text"] == GERMAN}
    assert len(alice) == 1 and boosted["account"] not in alice

    state = json.loads((tmp_path / "state.json").read_text())
    assert state["instances"][a.url]["cursors"]["tag:queer"] == {"newest_id": "1111"}
    assert SHARED_URI not in json.dumps(state) and state["key_fingerprint"] == stats["key_fingerprint"]
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in tmp_path.iterdir())


def _signal_instance() -> FakeInstance:
    d = "o.example"
    body = f"<p>{GERMAN}</p>"
    cases = {
        1: {"note": "<p>KI-Training? Nein. #NoAI</p>"}, 2: {"note": "#nobots"}, 3: {"note": "#nosearch"},
        4: {"note": "#noarchive"}, 5: {"fields": (("#nobot", "bitte nicht"),)}, 6: {"discoverable": False},
        7: {"indexable": None}, 8: {"visibility": "unlisted"}, 9: {"visibility": "private"},
        10: {"visibility": "direct"}, 11: {"tags": ("queer", "noai")},
    }
    statuses = [status(i, body, domain=d, created=T0 + timedelta(minutes=i), username=f"user{i}",
                       **{"tags": ("queer",), **kwargs}) for i, kwargs in cases.items()]
    statuses.append(status(50, body, domain=d, created=T0, username="willing", tags=("queer",)))
    return FakeInstance(d, statuses)


def test_every_opt_out_signal_and_non_public_visibility_drop_the_post(tmp_path):
    with FakeMastodonServer(_signal_instance()) as server:
        strict = run_crawl(tmp_path / "strict", server.url)["instances"][server.url]
        lenient = run_crawl(tmp_path / "lenient", server.url, accept_missing_indexable=True)["instances"][server.url]
    assert strict["dropped"] == {"opted_out": 8, "not_public": 3} and strict["kept"] == 1
    # The documented flag treats old servers' missing `indexable` as consent: user7 is then kept.
    assert lenient["dropped"] == {"opted_out": 7, "not_public": 3} and lenient["kept"] == 2


def test_rate_limit_and_server_error_are_retried(tmp_path):
    inst = FakeInstance("a.example", _posts("a.example", 5))
    inst.faults = [("/api/v1/timelines/tag/queer", 429), ("/api/v1/timelines/tag/queer", 500)]
    sleeps = Sleeps()
    with FakeMastodonServer(inst) as server:
        stats = run_crawl(tmp_path, server.url, sleeps=sleeps)
    assert stats["instances"][server.url]["status"] == "complete"
    assert stats["posts"] == 5
    # A wait for the announced reset (about 1 s), then the backoff of a 2nd attempt (2 x 0.5 s) after the 500.
    assert len(sleeps) == 2 and 0 < sleeps[0] <= 2.5 and sleeps[1] == 1.0  # Date has 1 s resolution
    assert stats["instances"][server.url]["requests"] == len(server.requests)


@pytest.mark.parametrize("asked, waits, queer_requests, status", [
    ("600", [600.0], 2, "complete"),  # the refused request and one after the wait: none inside the window
    ("7200", [], 1, "rate limited: the server asked to wait 7200 s"),  # longer than a run waits: stop
])
def test_retry_after_is_honoured_to_the_second(tmp_path, asked, waits, queer_requests, status):
    inst = FakeInstance("a.example", _posts("a.example", 5))
    inst.faults = [("/api/v1/timelines/tag/queer", 429, {"Retry-After": asked})]
    sleeps = Sleeps()
    with FakeMastodonServer(inst) as server:
        stats = run_crawl(tmp_path, server.url, sleeps=sleeps)
        timeline = server.timeline_requests()
    assert sleeps == waits  # not 2, 4, 8, ... s
    assert sum(p.startswith("/api/v1/timelines/tag/queer") for p in timeline) == queer_requests
    assert len(timeline) == queer_requests + (status == "complete")  # a stopped instance asks nothing more
    assert stats["instances"][server.url]["status"].startswith(status)


def test_retries_are_bounded(tmp_path):
    inst = FakeInstance("a.example", [])
    inst.faults = [("/api/v1/timelines/tag/queer", 503)] * 5
    sleeps = Sleeps()
    with FakeMastodonServer(inst) as server:
        stats = run_crawl(tmp_path, server.url, sleeps=sleeps)
    feeds = stats["instances"][server.url]["feeds"]
    assert feeds["tag:queer"].startswith("failed: RetriesExhausted")
    assert feeds["tag:nichtbinär"] == "complete"  # the next feed still ran
    assert sleeps == [0.5, 1.0]  # three attempts, two backoffs


def test_login_only_and_disabled_feeds_are_reported_not_empty(servers, tmp_path):
    a, _ = servers
    login_only = FakeInstance("login.example", _posts("login.example", 1), hashtag_feeds="authenticated")
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


def test_unreachable_and_misspelt_instances_fail_fast_and_do_not_stop_the_others(servers, tmp_path):
    a, b = servers
    with FakeMastodonServer(FakeInstance("gone.example")) as gone:
        dead_url = gone.url
    sleeps = Sleeps()
    stats = run_crawl(tmp_path, dead_url, "https://no-such-instance.invalid", a.url, b.url, sleeps=sleeps)
    per = stats["instances"]
    assert per[dead_url]["status"].startswith("probe failed: RetriesExhausted")
    misspelt = per["https://no-such-instance.invalid"]
    assert misspelt["status"].startswith("probe failed: Refused: cannot resolve host 'no-such-instance.invalid'")
    assert misspelt["requests"] == 1 and len(misspelt["status"]) < 200
    assert len(sleeps) == 2  # the refused connection's backoffs; none for the name that does not resolve
    assert per[a.url]["status"] == "complete"
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
    # robots.txt, instance v2 + terms (probe), v2 again (Mastodon.py's own feed check), one page per feed
    assert len(a.requests) - before == 6
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
    run_crawl(tmp_path / "ref", a.url, b.url)
    reference = {p["doc_id"]: p for p in read_posts(tmp_path / "ref")}
    out = tmp_path / "budget"
    runs = 0
    while True:
        runs += 1
        stats = run_crawl(out, a.url, b.url, max_requests=6)  # a run needs 6 at least
        if all(i["status"] == "complete" for i in stats["instances"].values()):
            break
        assert stats["instances"][a.url]["status"] == "request budget used up; rerun to continue"
        assert runs < 20
    posts = read_posts(out)
    assert runs >= 3
    assert len(posts) == len({p["doc_id"] for p in posts}) == len(reference)
    assert {p["doc_id"]: sorted(p["seen_on"]) for p in posts} == {
        d: sorted(p["seen_on"]) for d, p in reference.items()}
    assert Counter(stats["instances"][a.url]["dropped"]) == Counter(A_DROPPED)


def test_one_bad_status_is_skipped_and_counted(tmp_path):
    statuses = _posts("a.example", 4)
    del statuses[1]["uri"]  # a status without uri
    statuses[2]["created_at"] = "gestern"  # and one with an unreadable date
    statuses[3]["account"] = "nobody"  # and one whose account is not an object
    with FakeMastodonServer(FakeInstance("a.example", statuses)) as server:
        first = run_crawl(tmp_path, server.url)
        second = run_crawl(tmp_path, server.url)  # not a poison pill on the next run either
    for stats in (first, second):
        assert stats["instances"][server.url]["feeds"]["tag:queer"] == "complete"
    assert first["instances"][server.url]["dropped"] == {"malformed": 3}
    assert len(read_posts(tmp_path)) == 1


def test_the_origins_copy_wins_over_a_spoofed_one(tmp_path):
    fediverse = Fediverse()
    uri = "https://origin.example/users/alice/statuses/42"
    spoof = status(7, f"<p>Gefälscht, aber queer: {GERMAN}</p>", domain="spoof.example", created=T0,
                   acct="alice@origin.example", username="alice", uri=uri, tags=("queer",))
    real = status(42, f"<p>Echt und queer: {GERMAN}</p>", domain="origin.example", created=T0,
                  username="alice", uri=uri, tags=("queer",))
    with FakeMastodonServer(FakeInstance("spoof.example", [spoof]), fediverse) as s, \
            FakeMastodonServer(FakeInstance("origin.example", [real]), fediverse) as o:
        run_crawl(tmp_path, s.url)  # the spoofing server is crawled first
        assert read_posts(tmp_path)[0]["text"].startswith("Gefälscht")
        run_crawl(tmp_path, o.url)
        again = run_crawl(tmp_path, s.url)  # and again later: the origin's copy stays
    [post] = read_posts(tmp_path)
    assert post["text"].startswith("Echt") and post["seen_on"] == [o.netloc, s.netloc]
    assert again["posts"] == 1


@pytest.mark.parametrize("answer, expected", [
    ((200, {"Content-Type": "text/html"}, b"<!DOCTYPE html><html><body>" + b"<p>Willkommen!</p>" * 20_000),
     "not a Mastodon API"),
    ((200, {"Content-Type": "application/json"}, b'{"meta": "misskey"}'), "JSON without a Mastodon version"),
])
def test_a_server_that_is_not_mastodon_gets_one_short_line(tmp_path, answer, expected):
    inst = FakeInstance("web.example", raw={"/api/v2/instance": answer})
    sleeps = Sleeps()
    with FakeMastodonServer(inst) as server:
        stats = run_crawl(tmp_path, server.url, sleeps=sleeps)
    line = stats["instances"][server.url]["status"]
    assert expected in line and len(line) <= 250 and "\n" not in line and "Willkommen" not in line
    assert sleeps == [] and (tmp_path / "stats.json").stat().st_size < 3000
    assert "Willkommen" not in (tmp_path / "state.json").read_text()


def test_misskey_answers_404_to_both_instance_endpoints(tmp_path):
    inst = FakeInstance("misskey.example", raw={"/api/v2/instance": (404, {}, b"Not Found"),
                                                "/api/v1/instance": (404, {}, b"Not Found")})
    with FakeMastodonServer(inst) as server:
        stats = run_crawl(tmp_path, server.url)
    assert "not a Mastodon API" in stats["instances"][server.url]["status"]


def test_an_oversized_answer_is_refused_not_read(tmp_path):
    import gzip
    bomb = gzip.compress(b"[" + b" " * 50_000_000 + b"]", compresslevel=9)  # 50 KB that inflate to 50 MB
    inst = FakeInstance("a.example", _posts("a.example", 2))
    inst.raw["/api/v1/timelines/tag/nichtbinär"] = (200, {"Content-Encoding": "gzip",
                                                         "Content-Type": "application/json"}, bomb)
    sleeps = Sleeps()
    with FakeMastodonServer(inst) as server:
        stats = run_crawl(tmp_path, server.url, sleeps=sleeps)
    feeds = stats["instances"][server.url]["feeds"]
    assert feeds["tag:nichtbinär"].startswith("failed: Refused: answer larger than the 4000000 bytes")
    assert feeds["tag:queer"] == "complete" and sleeps == []


def test_a_redirect_into_the_internal_network_is_not_followed(tmp_path):
    with FakeMastodonServer(FakeInstance("inside.example", _posts("inside.example", 2))) as inside:
        inst = FakeInstance("a.example", _posts("a.example", 2))
        inst.raw["/api/v1/timelines/tag/nichtbinär"] = (
            302, {"Location": f"{inside.url}/api/v1/timelines/tag/queer"}, b"")
        with FakeMastodonServer(inst) as server:
            stats = run_crawl(tmp_path, server.url)  # the crawled instance itself is allowed, being named
    feed = stats["instances"][server.url]["feeds"]["tag:nichtbinär"]
    assert feed.startswith("failed: Refused: 127.0.0.1 resolves to the internal address")
    assert inside.requests == [] and stats["posts"] == 2


def test_robots_txt_rules_and_deny_list_are_respected(tmp_path):
    fediverse = Fediverse()
    robots = FakeInstance("robots.example", _posts("robots.example", 2),
                          robots="User-agent: *\nDisallow: /api/\n")
    own = FakeInstance("own.example", _posts("own.example", 2),
                       robots="User-agent: queerbias-test\nDisallow: /\n\nUser-agent: *\nAllow: /\n")
    rules = FakeInstance("rules.example", _posts("rules.example", 2),
                         rules=("Keine Diskriminierung.", "Kein Scraping, kein KI-Training."))
    gptbot = FakeInstance("ok.example", _posts("ok.example", 2), robots="User-agent: GPTBot\nDisallow: /\n",
                          title="Server von @olga@ok.example")  # a one-person server names its owner
    denied_origin = _posts("denied.example", 1, start=90)[0]
    gptbot.statuses.append(status(91, f"<p>Von dort: {GERMAN}</p>", domain="ok.example", created=T0,
                                  acct="dora@denied.example", username="dora", uri=denied_origin["uri"],
                                  tags=("queer",)))
    with FakeMastodonServer(robots, fediverse) as r, FakeMastodonServer(own, fediverse) as o, \
            FakeMastodonServer(rules, fediverse) as ru, FakeMastodonServer(gptbot, fediverse) as ok, \
            FakeMastodonServer(FakeInstance("denied.example"), fediverse) as denied:
        stats = run_crawl(tmp_path / "a", r.url, o.url, ru.url, ok.url)
        per = stats["instances"]
        for server in (r, o, ru):
            assert per[server.url]["status"].startswith("skipped:") and server.timeline_requests() == []
        assert "robots.txt disallows" in per[r.url]["status"] and "robots.txt disallows" in per[o.url]["status"]
        assert "rules mention AI or scraping: 'Kein Scraping" in per[ru.url]["status"]
        assert "--allow-instance" in per[ru.url]["status"]
        # A GPTBot block (Mastodon's default robots.txt) opts the instance out of AI training: skipped.
        assert per[ok.url]["status"].startswith("skipped: its robots.txt disallows AI-training crawlers")
        assert per[ok.url]["probe"]["ai_crawlers_disallowed"] and ok.timeline_requests() == []
        assert "olga" not in json.dumps(per[ok.url]["probe"])

        # The admin agreed: --allow-instance overrides robots.txt and rules (never the deny-list), and says so.
        allowed = run_crawl(tmp_path / "b", r.url, ru.url, ok.url,
                            allowed_instances=frozenset({r.url, ru.url, ok.url}))
        assert all(i["status"] == "complete" for i in allowed["instances"].values())
        assert allowed["instances"][ok.url]["kept"] == 3
        assert allowed["instances"][ok.url]["admin_agreed"][0].startswith(
            "its robots.txt disallows AI-training crawlers")
        assert allowed["instances"][ru.url]["admin_agreed"][0].startswith("its rules mention AI or scraping")

        # The deny-list: no request at all to a denied instance, and its users' posts seen elsewhere dropped.
        before = len(denied.requests)
        dropped = run_crawl(tmp_path / "c", denied.url, ok.url, deny_list=frozenset({denied.netloc}),
                            allowed_instances=frozenset({denied.url, ok.url}))["instances"]
        assert dropped[denied.url]["status"] == "skipped: on the instance deny-list"
        assert len(denied.requests) == before
        assert dropped[ok.url]["dropped"] == {"instance_denied": 1} and dropped[ok.url]["kept"] == 2


def test_a_token_unlocks_login_only_feeds_only_where_the_admin_agreed(tmp_path):
    inst = FakeInstance("login.example", _posts("login.example", 3), hashtag_feeds="authenticated", token="t0k")
    with FakeMastodonServer(inst) as server:
        base = {"token": "t0k", "token_instance": server.url}
        refused = run_crawl(tmp_path / "a", server.url, **base)["instances"][server.url]
        agreed = run_crawl(tmp_path / "b", server.url, allowed_instances=frozenset({server.url}), **base)
    assert refused["feeds"]["tag:queer"] == "login_required" and refused["kept"] == 0
    assert agreed["posts"] == 3


def test_every_output_is_refused_without_a_contact(tmp_path):
    with pytest.raises(Exception, match="no contact"):
        crawl(CrawlSettings(out_dir=tmp_path, user_agent="queerbias-crawler/0.1"), policy=RetryPolicy())
    assert not tmp_path.joinpath("posts.jsonl").exists()
