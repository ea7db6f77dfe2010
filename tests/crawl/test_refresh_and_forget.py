"""Deletions, later opt-outs and takedowns reach the crawl store and the corpora built from it.

Real crawls into real stores (fake instances over HTTP, the real Mastodon.py client), then
`--refresh`, `corpus forget` and `corpus build` as a researcher would run them.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta, timezone

import pytest
from mastodon_scenario import (  # noqa: F401
    GERMAN,
    SHARED_URI,
    T0,
    Sleeps,
    assert_names_nobody,
    later,
    read_posts,
    run_crawl,
    run_refresh,
    servers,
)

from queerbias.cli import main
from queerbias.corpus.builder import BuildConfig, CorpusBuilder
from queerbias.corpus.sources import SourceSpec
from queerbias.crawl.keys import CrawlKey
from queerbias.crawl.mastodon.testserver import FakeInstance, FakeMastodonServer, Fediverse, status
from queerbias.crawl.mastodon.tombstones import Tombstones
from queerbias.errors import QueerbiasError

UA = ["--user-agent", "test (me@example.org)"]


def _statuses(server, username: str) -> list[dict]:
    return [s for s in server.instance.statuses if s["account"]["username"] == username]


def _texts(out) -> set[str]:
    return {p["text"] for p in read_posts(out)}


def _build(store, out, **options) -> dict:
    config = BuildConfig(name="c", output_dir=out, sources=[SourceSpec(store / "posts.jsonl")],
                         validation_fraction=0.3, near_duplicate_threshold=None, **options)
    return CorpusBuilder(config).run()


def _corpus(out) -> list[dict]:
    return [json.loads(line) for split in ("train", "validation")
            for line in (out / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()]


def test_refresh_removes_deleted_posts_and_authors_who_opted_out_and_replaces_edits(servers, tmp_path):
    a, b = servers
    out = tmp_path / "crawl"
    run_crawl(out, a.url, b.url)
    crawled = read_posts(out)
    # Upstream, after the crawl: a post is deleted, one is edited, and bob opts out of search.
    a.instance.statuses = [s for s in a.instance.statuses if s["id"] != "1005"]
    edited = next(s for s in a.instance.statuses if s["id"] == "1007")
    edited["content"] = f"<p>Nachtrag: {GERMAN}</p>"
    for s in _statuses(b, "bob"):
        s["account"]["indexable"] = False

    result = run_refresh(out)
    assert result["complete"]
    counts = result["counts"]
    assert counts["deleted"] == 1 and counts["edited"] == 1 and counts["author_opted_out"] == 1
    assert counts["unchanged"] == len(crawled) - 3
    texts = _texts(out)
    assert f"Beitrag 5: {GERMAN}" not in texts and f"Nachtrag: {GERMAN}" in texts
    assert not any("schwuler Abend" in t for t in texts)  # bob's post
    assert len(read_posts(out)) == len(crawled) - 2
    state = json.loads((out / "state.json").read_text())
    assert state["checked_at"] > crawled[0]["created_at"] and state["refresh"]["pass_started"] is None
    assert state["removed"] == {"deleted": 1, "author_opted_out": 1}
    assert_names_nobody(out)


def test_refresh_goes_on_where_a_cut_short_pass_stopped(servers, tmp_path):
    a, b = servers
    out = tmp_path / "crawl"
    run_crawl(out, a.url)
    clock = later(1)
    first = run_refresh(out, clock=clock, max_requests=10)
    assert not first["complete"] and first["counts"]["unchecked"] > 0
    asked_before = len(a.requests)
    second = run_refresh(out, clock=later(2))
    assert second["complete"]
    # The second run asked only for what the first did not get to (plus its own probe-free client setup).
    assert len(a.requests) - asked_before == first["counts"]["unchecked"]


def test_refresh_with_another_key_is_refused(servers, tmp_path, monkeypatch):
    a, _ = servers
    run_crawl(tmp_path / "crawl", a.url)
    monkeypatch.setenv("QUEERBIAS_CRAWL_KEY_FILE", str(tmp_path / "other.key"))
    with pytest.raises(QueerbiasError, match="was written with the crawl key"):
        run_refresh(tmp_path / "crawl")


def test_forget_removes_one_account_from_store_and_corpus_for_good(servers, tmp_path, capsys, crawl_key):
    a, b = servers
    store, corpus = tmp_path / "crawl", tmp_path / "corpus"
    run_crawl(store, a.url, b.url)
    _build(store, corpus)
    built = _corpus(corpus)
    alice = CrawlKey(crawl_key).account_pseudonym("alice@a.example")
    assert sum(r.get("account") == alice for r in built) > 30
    others = [r for r in built if r.get("account") != alice]

    assert main(["corpus", "forget", "--account", "Alice@A.example", str(tmp_path)]) == 0
    report = capsys.readouterr().out
    assert "posts.jsonl: removed 34 posts" in report and "removed" in report.splitlines()[1]
    assert "alice" not in report.lower()  # the report names pseudonyms only
    assert all(p["account"] != alice for p in read_posts(store))
    assert sorted(map(json.dumps, _corpus(corpus))) == sorted(map(json.dumps, others))
    stats = json.loads((corpus / "stats.json").read_text())
    assert stats["totals"]["documents"] == len(others) and stats["forgotten_after_build"] == len(built) - len(others)
    assert "removed later by `corpus forget`" in (corpus / "datasheet.md").read_text()
    for folder in (store, corpus):  # on the sealed removal lists, which name nobody in the clear
        assert Tombstones.load(folder, CrawlKey(crawl_key)).accounts[alice] == "forgotten"
        assert alice not in (folder / "tombstones.json").read_text()

    # Idempotent: nothing more to remove, and it says so.
    assert main(["corpus", "forget", "--account", "alice@a.example", str(tmp_path)]) == 0
    assert "nothing was left to remove" in capsys.readouterr().out

    # No later crawl, rebuilt state or build brings her back.
    (store / "state.json").unlink()
    stats = run_crawl(store, a.url, b.url)
    assert all(p["account"] != alice for p in read_posts(store))
    assert stats["instances"][a.url]["dropped"]["removed_earlier"] > 0
    _build(store, corpus)
    assert all(r.get("account") != alice for r in _corpus(corpus))
    assert_names_nobody(store, corpus)


def test_forget_by_url_and_with_the_wrong_key(servers, tmp_path, capsys, monkeypatch):
    a, b = servers
    store = tmp_path / "crawl"
    run_crawl(store, a.url, b.url)
    bob_url = f"{b.url}/@bob/5003"  # the post's address as people see it
    assert main(["corpus", "forget", "--url", bob_url, str(store)]) == 0
    assert "removed 1 posts" in capsys.readouterr().out
    assert not any("schwuler Abend" in t for t in _texts(store))

    assert main(["corpus", "forget", "--url", f"{a.url}/@alice", str(store)]) == 0  # a profile address
    assert "removed 34 posts" in capsys.readouterr().out

    monkeypatch.setenv("QUEERBIAS_CRAWL_KEY_FILE", str(tmp_path / "other.key"))
    (tmp_path / "other.key").write_text("ab" * 32 + "\n")
    (tmp_path / "other.key").chmod(0o600)
    assert main(["corpus", "forget", "--account", "carla@c.example", str(store)]) == 2
    assert "was written with the crawl key" in capsys.readouterr().err


def test_corpus_build_records_the_crawl_state_and_refuses_a_stale_one(servers, tmp_path, capsys):
    a, _ = servers
    store = tmp_path / "crawl"
    run_crawl(store, a.url)
    stats = _build(store, tmp_path / "fresh")
    crawl_state = stats["inputs"][0]["crawl_state"]
    assert crawl_state["posts"] == 34 and crawl_state["key_fingerprint"] and crawl_state["checked_at"]

    in_40_days = datetime.now(timezone.utc) + timedelta(days=40)
    config = BuildConfig(name="c", output_dir=tmp_path / "stale", sources=[SourceSpec(store / "posts.jsonl")])
    with pytest.raises(QueerbiasError, match="is stale .* --refresh"):
        CorpusBuilder(config, now=in_40_days).run()
    assert not (tmp_path / "stale" / "stats.json").exists()
    config.allow_stale = True
    assert CorpusBuilder(config, now=in_40_days).run()["settings"]["allow_stale"]

    run_refresh(store, clock=later(35))  # a refresh pass moves the crawl's age forward
    CorpusBuilder(BuildConfig(name="c", output_dir=tmp_path / "refreshed",
                              sources=[SourceSpec(store / "posts.jsonl")]), now=in_40_days).run()


def test_refresh_from_the_command_line_logs_no_ids_or_names(servers, tmp_path, capsys, caplog, crawl_key):
    a, _ = servers
    store = tmp_path / "crawl"
    run_crawl(store, a.url)
    _age_sealed_checks(store, CrawlKey(crawl_key))  # crawled long ago: this pass asks for every post
    a.instance.statuses = a.instance.statuses[1:]
    caplog.set_level(logging.DEBUG)
    assert main(["-v", "crawl", "mastodon", "--refresh", "--out", str(store), *UA]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"refresh of {store}: deleted 1, unchanged 33;") and line.endswith("pass complete")
    for secret in ("/statuses/", "alice", "@"):
        assert secret not in caplog.text


def _age_sealed_checks(store, key: CrawlKey) -> None:
    lines = []
    for line in (store / "reid.jsonl").read_text().splitlines():
        entry = json.loads(line)
        data = {**key.unseal(entry["post"], entry["sealed"]), "checked_at": "2024-01-01T00:00:00+00:00"}
        lines.append(json.dumps({"post": entry["post"], "sealed": key.seal(entry["post"], data)}) + "\n")
    (store / "reid.jsonl").write_text("".join(lines))


def test_posts_whose_sealed_data_was_lost_keep_the_pass_incomplete(servers, tmp_path):
    a, _ = servers
    store = tmp_path / "crawl"
    run_crawl(store, a.url)
    lines = (store / "reid.jsonl").read_text().splitlines()
    (store / "reid.jsonl").write_text("\n".join(lines[1:]) + "\n")  # one post can no longer be asked about
    result = run_refresh(store)
    assert not result["complete"] and result["counts"]["unchecked"] == 1
    state = json.loads((store / "state.json").read_text())
    assert state["refresh"]["pass_started"] and state["checked_at"] < state["refresh"]["pass_started"]


def test_a_copys_answer_does_not_confirm_a_post_whose_origin_did_not_answer(tmp_path):
    """Issue 48: when the origin could be asked but did not answer, another server's copy may remove the post but
    never count it as checked; the pass stays incomplete until the origin answers."""
    uri = "https://o.example/users/xaver/statuses/10"
    fediverse = Fediverse()
    origin = FakeInstance("o.example", [status(10, f"<p>{GERMAN}</p>", domain="o.example", created=T0,
                                               username="xaver", uri=uri, tags=("queer",))])
    mirror = FakeInstance("m.example", [status(20, f"<p>{GERMAN}</p>", domain="m.example", created=T0,
                                               acct="xaver@o.example", username="xaver", uri=uri, tags=("queer",))])
    out = tmp_path / "crawl"
    with FakeMastodonServer(origin, fediverse) as o, FakeMastodonServer(mirror, fediverse) as m:
        run_crawl(out, m.url)  # the copy is crawled; its uri names the origin, asked first at refresh
        assert len(read_posts(out)) == 1
        origin.raw["/api/v1/statuses/10"] = (503, {"Content-Type": "application/json"}, b'{"error": "down"}')
        reachable = {"instances": (o.url,)}  # a local address, allowed as one named is
        result = run_refresh(out, **reachable)
        assert not result["complete"] and result["counts"] == {"unchecked": 1}
        assert any(r["path"].endswith("/statuses/20") for r in m.requests)  # the copy was asked, and not believed
        del origin.raw["/api/v1/statuses/10"]
        again = run_refresh(out, clock=later(2), **reachable)
        assert again["complete"], again  # the origin answers again
