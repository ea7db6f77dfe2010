"""Issue 22, the hostile review's second round: removals stay removed, display names and obfuscated
contacts leave the text, every opt-out spelling counts, AI-training opt-outs decide, and hostile
answers (nested, dripped, rate-limited for ever, Latin-1, lone surrogates) cost one source at most.

Fake Mastodon servers and small web sites on 127.0.0.1, the real Mastodon.py client, and the real
CLI where the behaviour is the CLI's; then a grep of every output file.
"""

from __future__ import annotations

import json
import urllib.request
from datetime import datetime, timedelta, timezone

import pytest
from mastodon_scenario import (  # noqa: F401
    GERMAN,
    POLICY,
    T0,
    Sleeps,
    assert_names_nobody,
    output_text,
    read_posts,
    run_crawl,
    run_refresh,
    servers,
)
from mastodon_scenario import settings as crawl_settings
from websites import Site, article, rss

from queerbias.cli import main
from queerbias.crawl.keys import CrawlKey
from queerbias.crawl.mastodon.client import RetryPolicy
from queerbias.crawl.mastodon.crawler import crawl
from queerbias.crawl.mastodon.testserver import FakeInstance, FakeMastodonServer, status
from queerbias.crawl.news.http import Fetcher, FetchError
from queerbias.errors import QueerbiasError

UA = "queerbias-test/1.0 (tests; contact: me@example.org)"
DEFAULT_MASTODON_ROBOTS = "User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow: /media_proxy/\n"


def _doc_id(key: CrawlKey, uri: str) -> str:
    return "mastodon:" + key.post_pseudonym(uri)


def _build(store, out, key_file, *extra) -> int:
    return main(["corpus", "build", "--name", "c", "--source", str(store / "posts.jsonl"), "-o", str(out),
                 "--key-file", str(key_file), "--validation-fraction", "0.3", "--no-near-duplicates", *extra])


def _corpus_ids(out) -> set[str]:
    return {json.loads(line)["doc_id"] for split in ("train", "validation")
            for line in (out / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()}


# -- 1. removals stay removed -----------------------------------------------------------------

def test_removals_survive_federated_copies_new_tags_a_lost_state_and_the_build(servers, tmp_path, crawl_key,
                                                                              capsys):
    a, b = servers
    key = CrawlKey(crawl_key)
    store = tmp_path / "crawl"
    bob_uri = "https://b.example/users/bob/statuses/5003"
    # a.example shows a federated copy of bob's post, with the account data it cached before he opted out,
    # and b.example one of alice's post; both copies are also on #csd, a tag crawled later.
    a.instance.statuses.append(status(1200, f"<p>Ein schwuler Abend im Kiez. {GERMAN}</p>", domain="a.example",
                                      created=T0, acct="bob@b.example", username="bob", uri=bob_uri,
                                      tags=("queer", "csd")))
    b.instance.statuses[0]["tags"].append({"name": "csd", "url": "https://b.example/tags/csd"})
    run_crawl(store, a.url, b.url)
    removed = {_doc_id(key, f"{a.url}/users/alice/statuses/1100"), _doc_id(key, f"{b.url}/users/bob/statuses/5003")}
    assert removed <= {p["doc_id"] for p in read_posts(store)}
    backup = (store / "posts.jsonl").read_bytes()

    # At the origins: alice deletes the post, bob turns `indexable` off.
    a.instance.statuses = [s for s in a.instance.statuses if s["id"] != "1100"]
    for s in b.instance.statuses:
        if s["account"]["username"] == "bob":
            s["account"]["indexable"] = False
    result = run_refresh(store)
    assert result["complete"] and result["counts"]["deleted"] == 1 and result["counts"]["author_opted_out"] == 1
    assert not removed & {p["doc_id"] for p in read_posts(store)}

    # Neither comes back: not from the federated copies on a new tag, nor after state.json is lost.
    more_tags = {"tags": ("queer", "nichtbinär", "csd")}
    stats = run_crawl(store, a.url, b.url, **more_tags)
    assert stats["instances"][a.url]["dropped"]["removed_earlier"] == 1  # bob's copy
    assert stats["instances"][b.url]["dropped"]["removed_earlier"] >= 1  # alice's copy
    (store / "state.json").unlink()
    run_crawl(store, a.url, b.url, **more_tags)
    assert not removed & {p["doc_id"] for p in read_posts(store)}
    assert json.loads((store / "stats.json").read_text())["tombstones"] == {"posts": 2, "accounts": 1}

    # A posts.jsonl restored from a backup brings nobody back into a corpus either.
    (store / "posts.jsonl").write_bytes(backup)
    assert _build(store, tmp_path / "corpus", crawl_key) == 0
    assert not removed & _corpus_ids(tmp_path / "corpus")
    built = json.loads((tmp_path / "corpus" / "stats.json").read_text())
    assert built["dropped"]["opted_out"] >= 2 and built["inputs"][0]["crawl_state"]["removed_posts"] == 2
    assert "schwuler Abend" not in output_text(tmp_path / "corpus")
    assert_names_nobody(store, tmp_path / "corpus")
    capsys.readouterr()

    # The list is sealed, and a store whose list does not open (or is gone) is refused.
    listed = (store / "tombstones.json").read_text()
    assert all(p.removeprefix("mastodon:") not in listed for p in removed)
    (store / "tombstones.json").write_text(listed.replace('"sealed": "', '"sealed": "AAAA'))
    assert _build(store, tmp_path / "c2", crawl_key) == 2
    err = capsys.readouterr().err.strip()
    assert "tombstones.json" in err and "\n" not in err
    (store / "tombstones.json").unlink()
    assert _build(store, tmp_path / "c3", crawl_key) == 2
    assert "tombstones.json: missing" in capsys.readouterr().err
    with pytest.raises(QueerbiasError, match="tombstones.json: missing: .* --recover"):
        run_crawl(store, a.url)  # the crawl does not start afresh with an empty list either
    other = tmp_path / "other.key"
    CrawlKey(other)
    (store / "tombstones.json").write_text(listed)
    assert _build(store, tmp_path / "c4", other) == 2
    assert "was written with the crawl key" in capsys.readouterr().err


def test_an_older_stores_forgotten_json_is_folded_into_the_sealed_list(tmp_path, crawl_key, capsys):
    key = CrawlKey(crawl_key)
    statuses = [status(10 + i, f"<p>Nr. {i}: {GERMAN}</p>", domain="d.example", username=user, tags=("queer",),
                       created=T0 + timedelta(minutes=i)) for i, user in enumerate(("alice", "bob", "alice"))]
    store = tmp_path / "crawl"
    with FakeMastodonServer(FakeInstance("d.example", statuses)) as server:
        run_crawl(store, server.url)
    # What an older queerbias left: forgotten.json in the clear, no removal list, no count of it in the state.
    alice = key.account_pseudonym("alice@d.example")
    (store / "forgotten.json").write_text(json.dumps({"kind": "queerbias-forgotten", "key_fingerprint":
                                                      key.fingerprint, "accounts": [alice]}))
    (store / "tombstones.json").unlink()
    state = json.loads((store / "state.json").read_text())
    del state["tombstones"]
    (store / "state.json").write_text(json.dumps(state))
    assert _build(store, tmp_path / "corpus", crawl_key) == 2
    assert "gains it with one `queerbias crawl mastodon --refresh --out" in capsys.readouterr().err
    run_refresh(store)  # opening the store folds the file in, and takes alice's posts out
    assert not (store / "forgotten.json").exists() and (store / "tombstones.json").exists()
    assert {p["account"] for p in read_posts(store)} == {key.account_pseudonym("bob@d.example")}
    assert _build(store, tmp_path / "corpus", crawl_key) == 0
    capsys.readouterr()


def test_forget_leaves_no_first_or_last_posting_date_of_the_person(tmp_path, crawl_key, capsys):
    days = {"alice": ("2023-01-02", "2023-12-30"), "bob": ("2023-05-05", "2023-06-06")}
    statuses = [status(10 + i, f"<p>Nr. {i}: {GERMAN}</p>", domain="d.example", username=user, tags=("queer",),
                       created=datetime.fromisoformat(day).replace(tzinfo=timezone.utc))
                for i, (user, day) in enumerate((u, d) for u, pair in days.items() for d in pair)]
    with FakeMastodonServer(FakeInstance("d.example", statuses)) as server:
        run_crawl(tmp_path / "crawl", server.url)
    assert _build(tmp_path / "crawl", tmp_path / "corpus", crawl_key) == 0
    assert "2023-01-02" in (tmp_path / "corpus" / "datasheet.md").read_text()
    assert main(["corpus", "forget", "--account", "alice@d.example", str(tmp_path)]) == 0
    for name in ("stats.json", "datasheet.md"):
        text = (tmp_path / "corpus" / name).read_text()
        assert "2023-01-02" not in text and "2023-12-30" not in text
    assert "withheld (takedown)" in (tmp_path / "corpus" / "datasheet.md").read_text()
    capsys.readouterr()


# -- 2.-5. what the text and the tags keep ------------------------------------------------------

# The people of the scrubbing test, in every spelling the posts use: none may reach an output file.
SPELLINGS = ("annam", "Anna", "anna", "ANNA", "Müller", "MÜLLER", "AnnaMüller", "annamüller", "Meier", "bobm",
             "bücher", "xn--bcher", "(at)", "[at]", "mueller", "＠", ".@", "1234567", "+49", "030")


def _scrub_instance() -> FakeInstance:
    d = "p.example"
    text = (f"<p>{GERMAN} Liebe Grüße, anna   MÜLLER <a href='https://p.example/tags/annam%C3%BCller'>#AnnaMüller</a>"
            "</p><p>Schreibt .@jo oder ＠jo＠bücher.de, jo@xn--bcher-kva.de, anna(at)example.org, "
            "anna [at] mueller [dot] de; Tel. +49.170.1234567, +49\u202f170\u20091234567 oder 030\u202f1234567. "
            "Hallo Bob   Meier!</p><p>#queer</p>")
    post = status(10, text, domain=d, created=T0, username="annam", tags=("queer", "annamüller"))
    post["account"]["display_name"] = "Anna Müller :verified: (sie/ihr)"
    post["mentions"] = [{"id": "9", "username": "bobm", "acct": "bobm@m.example", "url": "https://m.example/@bobm",
                         "display_name": "Bob Meier"}]
    inst = FakeInstance(d, [post], title="Server von anna(at)example.org",
                        rules=("Kontakt: anna [at] mueller [dot] de oder +49.170.1234567",))
    # A failing feed whose error text names Anna's address: retried at once (Retry-After: 0), then given up.
    inst.raw["/api/v1/timelines/tag/nichtbinär"] = (
        503, {"Retry-After": "0", "Content-Type": "application/json"},
        json.dumps({"error": "Fehler: schreib an anna@example.org oder +49 170 1234567"}).encode())
    return inst


def test_names_and_contacts_in_every_spelling_reach_no_output_file(tmp_path, crawl_key, capsys):
    store, corpus = tmp_path / "crawl", tmp_path / "corpus"
    with FakeMastodonServer(_scrub_instance()) as server:
        assert main(["crawl", "mastodon", "--out", str(store), "--instance", server.url, "--tag", "queer",
                     "--tag", "nichtbinär", "--user-agent", UA]) == 0
    [post] = read_posts(store)
    assert post["text"].endswith("Liebe Grüße, <name> <name>\n\nSchreibt .<user> oder <user>, <email>, <email>, "
                                 "<email>; Tel. <phone>, <phone> oder <phone>. Hallo <name>!\n\n#queer")
    assert post["tags"] == ["queer"]  # the author's name as a tag went with the text
    stats = json.loads((store / "stats.json").read_text())
    inst = stats["instances"][server.url]
    assert inst["scrubbed"] == {"name": 3, "user": 2, "email": 3, "phone": 3}
    # A feed that kept failing: the instance is incomplete, and its error holds a status and a scrubbed reason.
    assert inst["status"].startswith("incomplete: 1 of 2 feeds failed")
    assert "MastodonServiceUnavailableError 503" in inst["feeds"]["tag:nichtbinär"]
    out = capsys.readouterr()
    assert _build(store, corpus, crawl_key) == 0
    out2 = capsys.readouterr()
    text = output_text(store, corpus) + out.out + out.err + out2.out + out2.err
    for spelling in SPELLINGS:
        assert spelling not in text, f"{spelling!r} found in the outputs"


def test_every_spelling_of_an_opt_out_tag_and_the_display_name_count(tmp_path):
    d = "o.example"
    cases = {1: {"note": "#Ｎｏ\u200bＢｏｔ"}, 2: {"note": "＃noindex"}, 3: {"note": "#no\u00adbot"}, 4: {"note": "#NOAI"},
             5: {"note": "Bitte nicht: #NoKI"}, 6: {"note": "#no_ai"}, 7: {"tags": ("queer", "ｎｏａｉ")},
             8: {"display_name": "Jo #NoBot"}, 9: {"note": "#nobotanik #noaiolos"}}
    statuses = []
    for i, case in cases.items():
        s = status(i, f"<p>{GERMAN}</p>", domain=d, created=T0 + timedelta(minutes=i), username=f"user{i}",
                   note=case.get("note", ""), tags=case.get("tags", ("queer",)))
        s["account"]["display_name"] = case.get("display_name", f"User {i}")
        statuses.append(s)
    with FakeMastodonServer(FakeInstance(d, statuses)) as server:
        stats = run_crawl(tmp_path, server.url)["instances"][server.url]
    assert stats["dropped"] == {"opted_out": 8} and stats["kept"] == 1  # #nobotanik is no opt-out


# -- 6.-7. robots.txt and AI-training opt-outs --------------------------------------------------

def test_robots_groups_bind_a_custom_agent_the_local_timeline_and_ai_crawlers(tmp_path, capsys):
    def posts(d):
        return [status(10 + i, f"<p>Nr. {i}: {GERMAN}</p>", domain=d, created=T0 + timedelta(minutes=i),
                       tags=("queer",)) for i in range(2)]
    ours = FakeInstance("ours.example", posts("ours.example"), robots="User-agent: queerbias-crawler\nDisallow: /\n")
    news = FakeInstance("news.example", posts("news.example"), robots="User-agent: queerbias-news\nDisallow: /\n")
    live = FakeInstance("live.example", posts("live.example"),
                        robots="User-agent: *\nDisallow: /api/v1/timelines/public\n")
    gpt = FakeInstance("gpt.example", posts("gpt.example"), robots=DEFAULT_MASTODON_ROBOTS)
    with FakeMastodonServer(ours) as o, FakeMastodonServer(news) as n, FakeMastodonServer(live) as li, \
            FakeMastodonServer(gpt) as g:
        args = ["crawl", "mastodon", "--tag", "queer", "--local-timeline", "--user-agent", "mybot/2.0 (me@example.org)",
                "--instance", o.url, "--instance", n.url, "--instance", li.url, "--instance", g.url]
        assert main([*args, "--out", str(tmp_path / "a")]) == 0
        printed = capsys.readouterr().out
        assert f"{o.url}: skipped: its robots.txt disallows our crawler" in printed
        assert f"{n.url}: skipped: its robots.txt disallows our crawler" in printed
        assert f"{g.url}: skipped: its robots.txt disallows AI-training crawlers" in printed
        for server in (o, n, g):
            assert server.timeline_requests() == []
        assert not any("/timelines/public" in p for p in li.timeline_requests())
        per = json.loads((tmp_path / "a" / "stats.json").read_text())["instances"]
        assert per[li.url]["feeds"] == {"tag:queer": "complete", "local": "robots_disallowed"}

        # Its admin agreed: crawled, and the override is recorded in stats and in the datasheet.
        assert main([*args[:-6], "--instance", g.url, "--allow-instance", g.url, "--out", str(tmp_path / "b")]) == 0
    agreed = json.loads((tmp_path / "b" / "stats.json").read_text())["instances"][g.url]["admin_agreed"]
    assert agreed and agreed[0].startswith("its robots.txt disallows AI-training crawlers")
    assert main(["corpus", "build", "--name", "g", "--source", str(tmp_path / "b" / "posts.jsonl"),
                 "-o", str(tmp_path / "corpus"), "--no-near-duplicates"]) == 0
    assert "1 Mastodon instance(s) were crawled although" in (tmp_path / "corpus" / "datasheet.md").read_text()


def test_news_redirects_ask_the_target_site_and_a_nested_tdmrep_costs_one_site(tmp_path, capsys):
    with Site() as home, Site() as other, Site() as nested:
        other.routes["/robots.txt"] = (200, {"Content-Type": "text/plain"}, b"User-agent: GPTBot\nDisallow: /a/\n")
        other.routes["/.well-known/tdmrep.json"] = (200, {"Content-Type": "application/json"},
                                                    json.dumps([{"location": "/b/*", "tdm-reservation": 1}]).encode())
        for path in ("/a/x.html", "/b/x.html", "/c/x.html"):
            other.routes[path] = (200, {}, article("Queere Jugendzentren"))
            home.routes["/go" + path] = (302, {"Location": other.base + path}, b"")
        home.routes["/feed.xml"] = (200, {"Content-Type": "application/rss+xml"},
                                    rss([(p, f"{home.base}/go{p}") for p in ("/a/x.html", "/b/x.html", "/c/x.html")]))
        nested.routes["/.well-known/tdmrep.json"] = (200, {"Content-Type": "application/json"}, b"[" * 100_000)
        nested.routes["/q.html"] = (200, {}, article("Queere Jugendzentren"))
        nested.routes["/feed.xml"] = (200, {"Content-Type": "application/rss+xml"}, rss([("n", "/q.html")]))
        args = ["crawl", "news", "--out", str(tmp_path), "--delay", "0", "--user-agent", UA,
                "--feed", nested.base + "/feed.xml", "--feed", home.base + "/feed.xml"]
        for site in (home, other, nested):
            args += ["--allow-private-host", site.host]
        assert main(args) == 0
        printed = capsys.readouterr().out
        assert '"robots_disallowed": 1' in printed and '"tdm_reserved": 1' in printed
        assert '"tdmrep_unreadable": 1' in printed and '"kept": 1' in printed
        assert other.requests.count("/a/x.html") == 0 and other.requests.count("/b/x.html") == 0
        assert nested.requests.count("/q.html") == 0
    [kept] = [json.loads(line) for line in (tmp_path / "news.jsonl").read_text().splitlines()]
    assert kept["url"] == other.base + "/c/x.html"


# -- 8.-12. hostile answers ---------------------------------------------------------------------

def test_a_dripping_server_is_cut_off_at_the_total_deadline(tmp_path):
    inst = FakeInstance("slow.example", [status(10, f"<p>{GERMAN}</p>", domain="slow.example", created=T0,
                                                tags=("queer",))])
    # One byte per 0.2 s, each well within the per-read timeout: an answer of a kilobyte takes minutes, so only
    # the total deadline gets the client out. However slow the machine, the request is then named as cut off
    # there (`requests`' own timeouts are ReadTimeout and ConnectTimeout; a bare Timeout is the deadline's).
    # The deadline (3 s) holds every request of the crawl, so it is wide enough for the instance's ordinary
    # answers on a loaded machine; the dripped answer would need minutes.
    inst.drip["/api/v1/timelines/tag/queer"] = 0.2
    with FakeMastodonServer(inst) as server:
        stats = crawl(crawl_settings(tmp_path / "m", server.url, tags=("queer",), request_timeout=3.0),
                      policy=RetryPolicy(max_attempts=2, backoff_base=0.1), sleep=Sleeps())
        feed = stats["instances"][server.url]["feeds"]["tag:queer"]
        assert feed == "failed: RetriesExhausted: gave up after 2 attempts: MastodonNetworkError: network error (Timeout)"
        assert read_posts(tmp_path / "m") == []
        del inst.drip["/api/v1/timelines/tag/queer"]
        whole = urllib.request.urlopen(server.url + "/api/v1/timelines/tag/queer?limit=10").read()
        assert server.dripped < len(whole)  # both attempts together sent less than one answer

        server.instance.robots = "User-agent: *\nAllow: /\n" * 20
        server.instance.drip["/robots.txt"] = 0.2
        fetcher = Fetcher(user_agent=UA, timeout=0.5, delay=0, allowed_hosts=[server.netloc])
        with pytest.raises(FetchError, match="no complete answer within 0.5 s") as cut:
            fetcher.get(server.url + "/robots.txt")
        assert cut.value.retry is True


def test_a_server_that_answers_429_for_ever_leaves_the_crawl_and_the_refresh_incomplete(tmp_path):
    inst = FakeInstance("busy.example", [status(10, f"<p>{GERMAN}</p>", domain="busy.example", created=T0,
                                                tags=("queer",))])
    with FakeMastodonServer(inst) as server:
        run_crawl(tmp_path, server.url)
        inst.raw["/api/v1/timelines/tag/queer"] = (429, {"Retry-After": "1"}, b'{"error": "Too many requests"}')
        inst.raw["/api/v1/statuses/10"] = (429, {"Retry-After": "1"}, b'{"error": "Too many requests"}')
        (tmp_path / "state.json").unlink()  # paging starts afresh, into the wall
        sleeps = Sleeps()
        stats = run_crawl(tmp_path, server.url, sleeps=sleeps)["instances"][server.url]
        assert stats["status"].startswith("incomplete:") and sleeps == [1.0] * (POLICY.max_attempts - 1)
        assert stats["feeds"]["tag:queer"].startswith("failed: RetriesExhausted")
        result = run_refresh(tmp_path)
    assert not result["complete"] and result["counts"]["unchecked"] == 1


def test_lone_surrogates_and_undeclared_latin_1_cost_a_status_or_a_feed_not_the_instance(tmp_path):
    d = "bad.example"
    good = [status(10 + i, f"<p>Nr. {i}: {GERMAN}</p>", domain=d, created=T0 + timedelta(minutes=i),
                   tags=("queer",)) for i in range(2)]
    good.append(status(20, f"<p>Kaputt \ud800 {GERMAN}</p>", domain=d, created=T0, tags=("queer",)))
    latin1 = json.dumps(good[:1], ensure_ascii=False).encode("latin-1")
    inst = FakeInstance(d, good)
    inst.raw["/api/v1/timelines/tag/nichtbinär"] = (200, {"Content-Type": "application/json"}, latin1)
    inst.raw["/api/v1/timelines/tag/latin"] = (200, {"Content-Type": "application/json; charset=iso-8859-1"}, latin1)
    with FakeMastodonServer(inst) as server:
        stats = run_crawl(tmp_path, server.url, tags=("queer", "nichtbinär", "latin"))["instances"][server.url]
    assert stats["dropped"] == {"bad_text": 1} and stats["feeds"]["tag:queer"] == "complete"
    assert stats["feeds"]["tag:nichtbinär"] == ("failed: Refused: the answer is not in UTF-8, and it declares no "
                                                "charset")
    assert stats["feeds"]["tag:latin"] == "complete"  # decoded as declared
    assert {p["text"] for p in read_posts(tmp_path)} == {f"Nr. {i}: {GERMAN}" for i in range(2)}
