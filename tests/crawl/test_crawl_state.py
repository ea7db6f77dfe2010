"""What a corpus build reads of a crawl store (`corpus.crawl_state`): its state or, with state.json lost, its
statistics; how fresh it is, to the second; what its removal lists cover; a corpus's own list.

Real stores from crawls of the Mastodon test server, as a build meets them.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from cli_scenario import build_cli, corpus_lines, crawl_cli, forget_cli, post_by
from mastodon_scenario import read_posts, run_refresh

from queerbias.cli import main
from queerbias.corpus.crawl_state import PENDING_STATS, CrawlSource, Removals, corpus_list_record
from queerbias.corpus.forget import forget_in_corpus
from queerbias.crawl.keys import CrawlKey
from queerbias.crawl.mastodon.store import RECOVER_HINT
from queerbias.crawl.mastodon.testserver import FakeInstance, FakeMastodonServer
from queerbias.crawl.mastodon.tombstones import Tombstones
from queerbias.errors import QueerbiasError


@pytest.fixture
def store(tmp_path):
    """A crawl of three posts by anna and one by ben (11), and the address the server gave them."""
    folder = tmp_path / "crawl"
    posts = [post_by(10 + i, user, "d.example") for i, user in enumerate(("anna", "ben", "anna", "anna"))]
    with FakeMastodonServer(FakeInstance("d.example", posts)) as server:
        assert crawl_cli(folder, server.url) == 0
    return folder, server.url


def test_a_store_is_read_from_its_state_and_with_that_lost_from_its_statistics(store, crawl_key):
    store, _ = store
    key = CrawlKey(crawl_key)
    assert forget_cli("--account", "anna@d.example", store) == 0
    state = json.loads((store / "state.json").read_text())
    read = CrawlSource.beside(store / "posts.jsonl", lambda: key)
    assert read.as_dict() == {"key_fingerprint": key.fingerprint, "checked_at": state["checked_at"], "posts": 1,
                              "removed_posts": 3, "removed_accounts": 1, "instances_admin_agreed": 0}
    (store / "state.json").unlink()
    assert CrawlSource.beside(store / "posts.jsonl", lambda: key).as_dict() == read.as_dict()


@pytest.mark.parametrize("stats", [{"documents": 3}, {"instances": {}}, {"key_fingerprint": "ab12"}, ["instances"]])
def test_statistics_of_something_else_beside_posts_are_no_store(tmp_path, stats):
    (tmp_path / "posts.jsonl").write_text("")
    (tmp_path / "stats.json").write_text(json.dumps(stats), encoding="utf-8")
    assert CrawlSource.beside(tmp_path / "posts.jsonl", lambda: pytest.fail("no key is needed")) is None


def _source(checked_at: str | None) -> CrawlSource:
    return CrawlSource(Path("crawl"), "fp", checked_at, 0, None, 0)


T = datetime(2024, 5, 1, 12, tzinfo=timezone.utc)


def test_a_crawl_is_fresh_up_to_its_maximum_age_to_the_second():
    source = _source(T.isoformat())
    assert source.age_days(T + timedelta(hours=36)) == 1.5 and _source(None).age_days(T) is None
    source.require_fresh(T + timedelta(days=30), 30)
    with pytest.raises(QueerbiasError) as stale:
        source.require_fresh(T + timedelta(days=30, seconds=1), 30)
    assert str(stale.value) == (
        f"the crawl in crawl is stale (last checked {T.isoformat()}, more than 30 days ago): deleted posts and later "
        "opt-outs may still be in it; run `queerbias crawl mastodon --refresh --out crawl` first, or pass "
        "--allow-stale to build anyway")
    with pytest.raises(QueerbiasError, match=r"^the crawl in crawl is stale \(never checked, more than 7.5 days ago\)"):
        _source(None).require_fresh(T, 7.5)


def test_removals_cover_listed_posts_and_every_post_of_a_listed_author(store, crawl_key):
    store, _ = store
    key = CrawlKey(crawl_key)
    anna, ben = key.account_pseudonym("anna@d.example"), key.account_pseudonym("ben@d.example")
    by = {p["doc_id"]: p["account"] for p in read_posts(store)}
    assert forget_cli("--account", "anna@d.example", store) == 0
    removals = Removals(crawl_key)
    removals.add(Tombstones.load(store, key))
    listed = next(doc for doc, account in by.items() if account == anna)
    assert removals.accounts == {anna} and listed.removeprefix("mastodon:") in removals.posts
    assert removals.covers_post(listed, ben)  # the post itself is listed, whoever it is said to be by
    assert removals.covers_post("mastodon:0123456789abcdef", anna)  # a post of hers no list names
    assert not removals.covers_post(next(doc for doc, account in by.items() if account == ben), ben)
    assert not removals.covers_post(listed, None)  # a news article or taz text is no post
    with pytest.raises(QueerbiasError, match="^no crawl key at "):
        Removals(crawl_key.parent / "missing.key").key()  # only opened when a list needs it


def test_a_corpus_records_its_list_and_keeps_it_in_a_pending_copy_while_it_is_rewritten(tmp_path):
    assert corpus_list_record(tmp_path) == {}
    (tmp_path / "stats.json").write_text(json.dumps({"removal_list": {"list": "x", "posts": 2}}))
    assert corpus_list_record(tmp_path) == {"list": "x", "posts": 2}
    (tmp_path / PENDING_STATS).write_text(json.dumps({"removal_list": {"list": "y", "accounts": 1}}))
    assert corpus_list_record(tmp_path) == {"list": "y", "accounts": 1}
    (tmp_path / PENDING_STATS).write_text(json.dumps({"removal_list": "y"}))
    assert corpus_list_record(tmp_path) == {}
    (tmp_path / PENDING_STATS).write_text("[1, 2]")
    assert corpus_list_record(tmp_path) == {}
    (tmp_path / PENDING_STATS).write_text("{broken")
    assert corpus_list_record(tmp_path) == {"list": "x", "posts": 2}  # unreadable: the next file tells
    assert Removals(tmp_path / "no.key").add_folder(tmp_path / "nothing") is None


def _beside(folder, key):
    return CrawlSource.beside(folder / "posts.jsonl", lambda: key)


def test_a_store_whose_bookkeeping_was_lost_or_recovered_is_refused_until_refreshed(store, crawl_key):
    store, _ = store
    key = CrawlKey(crawl_key)
    state = json.loads((store / "state.json").read_text())
    (store / "state.json").write_text(json.dumps(state | {"recovery_needed": "2024-05-02T00:00:00+00:00"}))
    with pytest.raises(QueerbiasError) as refused:
        _beside(store, key)
    assert str(refused.value) == (f"{store}: a takedown found this store's bookkeeping lost; restore it from a backup"
                                  + RECOVER_HINT.format(folder=store))
    (store / "state.json").write_text(json.dumps(state | {"recovered_at": "2024-05-03T00:00:00+00:00"}))
    with pytest.raises(QueerbiasError) as refused:
        _beside(store, key)
    assert str(refused.value) == (f"{store} was recovered at 2024-05-03T00:00:00+00:00 after its bookkeeping was lost: "
                                  f"run `queerbias crawl mastodon --refresh --out {store}` (a complete pass) before "
                                  "building from it")
    for name in ("state.json", "stats.json", "tombstones.json"):
        (store / name).unlink()
    with pytest.raises(QueerbiasError) as refused:
        _beside(store, key)
    assert str(refused.value) == (f"{store} is a crawl store whose list of removed posts and authors and the records "
                                  "of it were lost, so removals could come back; restore them from a backup"
                                  + RECOVER_HINT.format(folder=store))


def test_a_stores_list_must_be_its_own_whole_and_read_with_its_key(store, crawl_key, tmp_path):
    store, url = store
    key = CrawlKey(crawl_key)
    older = (store / "tombstones.json").read_bytes()
    assert forget_cli("--account", "anna@d.example", store) == 0
    with pytest.raises(QueerbiasError, match="^no crawl key"):
        CrawlSource.beside(store / "posts.jsonl", lambda: CrawlKey.existing(tmp_path / "none.key"))
    other = CrawlKey(tmp_path / "other.key")
    with pytest.raises(QueerbiasError) as refused:
        _beside(store, other)
    assert str(refused.value).startswith(f"{store / 'state.json'} was written with the crawl key {key.fingerprint}, ")
    (store / "tombstones.json").write_bytes(older)  # an older copy: anna's removal is not on it
    with pytest.raises(QueerbiasError) as refused:
        _beside(store, key)
    assert str(refused.value) == (
        f"{store / 'tombstones.json'}: holds 0 removed accounts but the folder's records say 1: it was replaced by an "
        "older copy; restore it from a backup, or removals come back" + RECOVER_HINT.format(folder=store))
    copy = tmp_path / "copy"
    with FakeMastodonServer(FakeInstance("d.example", [post_by(10 + i, "anna", "d.example") for i in range(3)])) as s:
        assert crawl_cli(copy, s.url) == 0
    assert forget_cli("--account", "anna@d.example", copy) == 0
    (store / "tombstones.json").write_bytes((copy / "tombstones.json").read_bytes())  # as many entries, not its own
    with pytest.raises(QueerbiasError, match="it was copied from another store or corpus"):
        _beside(store, key)


def test_a_store_of_an_older_queerbias_gains_its_list_with_a_refresh(store, crawl_key):
    store, _ = store
    state = json.loads((store / "state.json").read_text())
    (store / "state.json").write_text(json.dumps({k: v for k, v in state.items() if k != "tombstones"}))
    (store / "tombstones.json").unlink()
    with pytest.raises(QueerbiasError) as refused:
        _beside(store, CrawlKey(crawl_key))
    assert str(refused.value).endswith(
        f"restore it from a backup (a store of an older queerbias gains it with one `queerbias crawl mastodon "
        f"--refresh --out {store}`)")


def test_a_store_everybody_left_holds_no_posts(store, crawl_key):
    store, _ = store
    assert forget_cli("--account", "anna@d.example", "--account", "ben@d.example", store) == 0
    assert _beside(store, CrawlKey(crawl_key)).as_dict()["posts"] == 0


def test_a_build_drops_what_any_stores_list_removed_as_it_reads_the_posts(tmp_path, crawl_key):
    """Store a lists anna (taken down) and ben's post 11 (deleted upstream, found by a refresh); store b lists
    nobody and holds copies of those posts and a post anna wrote later. The build leaves out every one of them
    as it reads b's posts (opted out), not only when it checks the lists again at the end."""
    statuses = [post_by(10 + i, user, "d.example") for i, user in enumerate(("anna", "ben", "anna", "ben"))]
    instance = FakeInstance("d.example", statuses)
    with FakeMastodonServer(instance) as server:
        for name in ("b", "a"):
            assert crawl_cli(tmp_path / name, server.url) == 0
        assert forget_cli("--account", "anna@d.example", tmp_path / "a") == 0
        instance.statuses = [s for s in instance.statuses if s["id"] != "11"]
        assert run_refresh(tmp_path / "a")["counts"]["deleted"] == 1  # a day later, when the post is due
        instance.statuses.append(post_by(30, "anna", "d.example"))
        assert crawl_cli(tmp_path / "b", server.url) == 0
    out = tmp_path / "corpus"
    assert main(["corpus", "build", "--name", "c", "--source", str(tmp_path / "a" / "posts.jsonl"), "--source",
                 str(tmp_path / "b" / "posts.jsonl"), "-o", str(out), "--validation-fraction", "0.3",
                 "--min-words", "post=1", "--no-near-duplicates"]) == 0
    assert [line["text"].split(":")[0] for line in corpus_lines(out)] == ["Nr. 13"]
    stats = json.loads((out / "stats.json").read_text())
    assert stats["dropped"]["opted_out"] == 4 and "removed_while_building" not in stats  # anna 10, 12, 30; ben 11


def test_a_built_corpus_keeps_its_own_list_whole(store, crawl_key, tmp_path):
    store, _ = store
    anna = CrawlKey(crawl_key).account_pseudonym("anna@d.example")
    corpus, other = tmp_path / "corpus", tmp_path / "other"
    for out in (corpus, other):
        assert build_cli(store, out) == 0
    assert Removals(crawl_key).add_folder(corpus) is None  # no takedown yet: no list, none recorded
    assert forget_cli("--account", "anna@d.example", corpus) == 0
    older = (corpus / "tombstones.json").read_bytes()
    # a line by ben, by its id alone, as `corpus forget` lists those of a corpus built before lines named their author
    forget_in_corpus(corpus, CrawlKey(crawl_key), set(), {corpus_lines(corpus)[0]["doc_id"]})
    middle = (corpus / "tombstones.json").read_bytes()  # 1 post and 1 account: the post count alone agrees
    assert forget_cli("--account", "anna@d.example", "--account", "ben@d.example", other) == 0
    assert forget_cli("--account", "ben@d.example", corpus) == 0
    removals = Removals(crawl_key)
    assert removals.add_folder(corpus).counts() == {"posts": 1, "accounts": 2} and anna in removals.accounts
    whole = (corpus / "tombstones.json").read_bytes()
    for replaced, refusal in ((older, "holds 0 removed posts but the folder's records say 1"),
                              (middle, "holds 1 removed accounts but the folder's records say 2"),
                              ((other / "tombstones.json").read_bytes(), "copied from another store or corpus"),
                              (None, "missing: this folder's list")):
        if replaced is None:
            (corpus / "tombstones.json").unlink()
        else:
            (corpus / "tombstones.json").write_bytes(replaced)
        with pytest.raises(QueerbiasError, match=refusal):
            Removals(crawl_key).add_folder(corpus)
    (corpus / "tombstones.json").write_bytes(whole)
    (corpus / "stats.json").write_text(json.dumps({k: v for k, v in json.loads((corpus / "stats.json").read_text())
                                                   .items() if k != "removal_list"}))
    assert Removals(crawl_key).add_folder(corpus).counts() == {"posts": 1, "accounts": 2}  # a list without a record


def test_a_store_counts_the_instances_crawled_because_their_admin_agreed(tmp_path, crawl_key):
    refusing = FakeInstance("rules.example", [post_by(20, "rita", "rules.example", local="rules.example")],
                            rules=("Kein Scraping, kein KI-Training.",))
    with FakeMastodonServer(refusing) as agreed, FakeMastodonServer(FakeInstance("d.example", [post_by(21, "ben",
                                                                                                    "d.example")])) as d:
        assert crawl_cli(tmp_path / "crawl", agreed.url, d.url, args=["--allow-instance", agreed.url]) == 0
    assert _beside(tmp_path / "crawl", CrawlKey(crawl_key)).as_dict()["instances_admin_agreed"] == 1
