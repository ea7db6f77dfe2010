"""Issue 29, data protection round three: takedowns that never miss, lost bookkeeping that never
re-admits a removal, opt-outs applied as soon as they are seen, names gone in every spelling.

Fake Mastodon servers on 127.0.0.1 and the real Mastodon.py client, the real CLI, and kills and
pauses at the points of `queerbias.killpoint` (a forked child is killed, so nothing races a clock).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time

import pytest
from cli_scenario import (
    a_label,
    authors,
    build_cli,
    corpus_lines,
    crawl_cli,
    crawl_to_corpus,
    forget_cli,
    in_child,
    post_by,
)
from mastodon_scenario import GERMAN, T0, UA, output_text, read_posts

from queerbias import killpoint
from queerbias.cli import main
from queerbias.crawl.keys import CrawlKey
from queerbias.crawl.mastodon.testserver import FakeInstance, FakeMastodonServer, status
from queerbias.crawl.mastodon.tombstones import Tombstones

PAUSE_ENV = "QUEERBIAS_PAUSE_AT"  # killpoint's pause (spelt out, so that this file also runs against older code)


# -- 1. hosts as IDNA A-labels ------------------------------------------------------------------

BUECHER, BUERO = "bücher.example", "büro.example"


def test_handles_urls_and_deny_lists_match_internationalised_domains_in_either_spelling(tmp_path, crawl_key, capsys):
    key = CrawlKey(crawl_key)
    statuses = [
        post_by(11, "anna", a_label(BUECHER)),  # Mastodon sends A-labels
        post_by(12, "ben", BUERO),  # a server that sends the Unicode form
        post_by(13, "fritz", a_label(BUECHER)),
        post_by(14, "gina", BUERO),
        post_by(15, "cem", a_label("münchen.example")),
        post_by(16, "dora", "köln.example"),
        post_by(17, "zed", "d.example"),
    ]
    deny = tmp_path / "deny.txt"
    deny.write_text(f"münchen.example\n{a_label('köln.example')}\n")
    store = tmp_path / "crawl"
    with FakeMastodonServer(FakeInstance("d.example", statuses)) as server:
        assert crawl_cli(store, server.url, args=["--deny-list", deny]) == 0
        stats = json.loads((store / "stats.json").read_text())["instances"][server.url]
        assert stats["dropped"] == {"instance_denied": 2} and stats["kept"] == 5
        capsys.readouterr()

        # Each person by the other spelling of their domain: by handle, by post address, by profile address.
        for args in (["--account", f"anna@{BUECHER}"], ["--account", f"ben@{a_label(BUERO)}"],
                     ["--url", f"https://{BUECHER}/@fritz/13"], ["--url", f"https://{a_label(BUERO)}/@gina"]):
            assert forget_cli(*args, store) == 0
            assert "removed 1 posts" in capsys.readouterr().out, args
        assert authors(store) == {key.account_pseudonym("zed@d.example")}
        assert key.account_pseudonym(f"Anna@{BUECHER.upper()}") == key.account_pseudonym(f"anna@{a_label(BUECHER)}")

        # The pseudonyms on the removal list are the ones later crawls compute: nobody comes back.
        (store / "state.json").unlink()
        assert crawl_cli(store, server.url, args=["--deny-list", deny]) == 0
    stats = json.loads((store / "stats.json").read_text())["instances"][server.url]
    assert stats["dropped"]["removed_earlier"] == 4 and len(read_posts(store)) == 1


# -- 2. lost bookkeeping ------------------------------------------------------------------------

def _two_people(domain: str = "d.example") -> FakeInstance:
    return FakeInstance(domain, [post_by(10 + i, user, domain, local=domain)
                                 for i, user in enumerate(("alice", "bob", "alice", "bob", "alice"))])


def test_lost_bookkeeping_never_readmits_a_removal(tmp_path, crawl_key, capsys):
    key = CrawlKey(crawl_key)
    alice, bob = key.account_pseudonym("alice@d.example"), key.account_pseudonym("bob@d.example")
    store = tmp_path / "crawl"
    with FakeMastodonServer(_two_people()) as server:
        assert crawl_cli(store, server.url) == 0
        # Without state.json the store is still found, and cleaned.
        (store / "state.json").unlink()
        assert forget_cli("--account", "bob@d.example", tmp_path) == 0
        assert "removed 2 posts" in capsys.readouterr().out and authors(store) == {alice}

        # Removal list, state and statistics all lost: nothing crawls, refreshes or builds it ...
        for name in ("state.json", "stats.json", "tombstones.json"):
            (store / name).unlink()
        assert crawl_cli(store, server.url) == 2
        assert f"crawl mastodon --recover --out {store}" in capsys.readouterr().err
        assert main(["crawl", "mastodon", "--refresh", "--out", str(store), "--user-agent", UA]) == 2
        assert build_cli(store, tmp_path / "corpus") == 2
        assert "--recover" in capsys.readouterr().err
        # ... but a takedown still works on it, and leaves it marked as needing recovery.
        assert forget_cli("--account", "alice@d.example", tmp_path) == 0
        report = capsys.readouterr().out
        assert "removed 3 posts; its bookkeeping was lost" in report and not read_posts(store)
        assert crawl_cli(store, server.url) == 2
        capsys.readouterr()

        assert main(["crawl", "mastodon", "--recover", "--out", str(store)]) == 0
        assert "repeat every takedown you recorded" in capsys.readouterr().out
        assert crawl_cli(store, server.url) == 0
        assert alice not in authors(store)  # the takedown made while the list was lost holds
        assert build_cli(store, tmp_path / "corpus") == 2  # not refreshed since the recovery
        assert "run `queerbias crawl mastodon --refresh" in capsys.readouterr().err
        assert main(["crawl", "mastodon", "--refresh", "--out", str(store), "--user-agent", UA]) == 0
        assert build_cli(store, tmp_path / "corpus") == 0

        # A removal list copied from another store is refused, even one holding as many entries.
        other = tmp_path / "other"
        assert crawl_cli(other, server.url) == 0
        assert forget_cli("--account", "bob@d.example", "--account", "alice@d.example", other) == 0
        assert all(a >= b for a, b in zip(Tombstones.load(other, key).counts().values(),
                                           Tombstones.load(store, key).counts().values()))
        shutil.copy(other / "tombstones.json", store / "tombstones.json")
        capsys.readouterr()
        assert crawl_cli(store, server.url) == 2
    assert "copied from another store or corpus" in capsys.readouterr().err
    assert bob not in authors(other)


# -- 3. a takedown killed at any point, a build killed before it finished -----------------------------

def _snapshot(root) -> dict:
    """What a takedown leaves: posts, corpus lines, statistics (less the time), removal lists' entries."""
    key = CrawlKey(os.environ["QUEERBIAS_CRAWL_KEY_FILE"])
    stats = json.loads((root / "corpus" / "stats.json").read_text())
    stats.pop("forgotten_at")
    stats.pop("removal_list", None)  # a list's id is its own: compared below by its entries
    return {"posts": sorted(json.dumps(p) for p in read_posts(root / "crawl")),
            "lines": sorted(json.dumps(r) for r in corpus_lines(root / "corpus")), "stats": stats,
            # the store's list whole; the corpus's by account (the posts it names beside them are a courtesy for
            # corpora built before lines carried their author, and a rerun may no longer know them)
            "lists": [(lambda t: (t.posts, t.accounts))(Tombstones.load(root / "crawl", key)),
                      Tombstones.load(root / "corpus", key).accounts],
            "files": sorted(p.name for f in ("crawl", "corpus") for p in (root / f).iterdir())}


@pytest.fixture
def built(tmp_path):
    """A crawl of alice and bob, and a corpus built from it."""
    pristine = tmp_path / "pristine"
    with FakeMastodonServer(_two_people()) as server:
        assert crawl_cli(pristine / "crawl", server.url) == 0
    assert build_cli(pristine / "crawl", pristine / "corpus") == 0
    return pristine


def _post_link(store, handle: str) -> str:
    """The web address of a stored post of `handle`, from the sealed data (a link a person sends with a request)."""
    key = CrawlKey(os.environ["QUEERBIAS_CRAWL_KEY_FILE"])
    sealed = [json.loads(line) for line in (store / "reid.jsonl").read_text().splitlines()]
    return next(data["url"] for data in (key.unseal(s["post"], s["sealed"]) for s in sealed)
                if data["account"] == handle)


@pytest.mark.parametrize("by", ["account", "post link"])
def test_a_takedown_killed_at_any_point_is_finished_by_running_it_again(built, tmp_path, capsys, by):
    # By a link to a post (issue 48): a run killed after it emptied the store, before the corpus, is rerun with
    # the same link, which then leads to no stored post; the store's removal list remembers where it led.
    person = ["--account", "alice@d.example"] if by == "account" else ["--url", _post_link(built / "crawl",
                                                                                         "alice@d.example")]
    args = ["corpus", "forget", *person]
    reference = tmp_path / "reference"
    shutil.copytree(built, reference)
    assert main([*args, str(reference)]) == 0
    expected = _snapshot(reference)
    assert len(expected["lines"]) == 2 and len(expected["posts"]) == 2

    point = 0
    while True:
        point += 1
        root = tmp_path / f"killed-{point}"
        shutil.copytree(built, root)
        code = in_child([*args, str(root)], {killpoint.ENV: f"removal:{point}"})
        if code == 0:
            break  # the takedown has fewer kill points than this: all of them were tried
        assert code == -signal.SIGKILL
        capsys.readouterr()
        assert main([*args, str(root)]) == 0
        report = capsys.readouterr().out
        assert _snapshot(root) == expected, f"killed at removal:{point}"
        assert "nothing was left to remove" not in report or point == 1 and "removed 0" in report
    assert point > 8  # list, posts and sealed data of the store; list, copy, splits, statistics of the corpus


def test_a_corpus_whose_build_was_killed_is_found_and_cleaned(built, tmp_path, crawl_key, capsys):
    alice = CrawlKey(crawl_key).account_pseudonym("alice@d.example")
    store = built / "crawl"
    build = ["corpus", "build", "--name", "c", "--source", str(store / "posts.jsonl"), "--validation-fraction", "0.3",
             "--no-near-duplicates"]
    for point, out in (("document:4", tmp_path / "torn"), ("renamed:1", tmp_path / "unfinished")):
        assert in_child([*build, "-o", str(out)], {killpoint.ENV: point}) == -signal.SIGKILL
        assert not (out / "stats.json").exists()
        assert list(out.glob(".*.jsonl.*.tmp")) or alice in output_text(out)  # what the killed build left
    capsys.readouterr()
    assert forget_cli("--account", "alice@d.example", tmp_path) == 0
    report = capsys.readouterr().out
    assert f"{tmp_path / 'torn'}: removed 0 lines" in report and "temporary files of a killed build" in report
    assert f"{tmp_path / 'unfinished'}: removed 3 lines" in report and "its build did not finish" in report
    for out in (tmp_path / "torn", tmp_path / "unfinished"):
        assert alice not in output_text(out) and not list(out.glob(".*.jsonl.*.tmp"))


# -- 4. a takedown while a build reads ---------------------------------------------------------

def test_a_takedown_during_a_build_reaches_the_new_corpus(built, tmp_path, crawl_key, capsys, monkeypatch):
    alice = CrawlKey(crawl_key).account_pseudonym("alice@d.example")
    store, out = built / "crawl", tmp_path / "new"
    fifo = tmp_path / "pause"
    os.mkfifo(fifo)
    monkeypatch.setenv(PAUSE_ENV, f"sources-read:1:{fifo}")
    result = {}
    builder = threading.Thread(target=lambda: result.setdefault("code", build_cli(store, out)))
    builder.start()
    while True:  # the build opens the pipe when it has read every source (no deadline: it gets there)
        try:
            gate = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:
            assert builder.is_alive(), "the build finished without pausing where a takedown can reach it"
            time.sleep(0.01)
    try:
        assert forget_cli("--account", "alice@d.example", built, out) == 2  # the store is done; the corpus is in use
        assert f"{out} is in use by another queerbias process" in capsys.readouterr().err
        assert alice not in authors(store)
    finally:
        os.close(gate)
        builder.join()
    monkeypatch.delenv(PAUSE_ENV)
    assert result["code"] == 0
    assert all(r["account"] != alice for r in corpus_lines(out))
    stats = json.loads((out / "stats.json").read_text())
    assert stats["removed_while_building"] == 3 and stats["sources"]["mastodon"]["first_published"] is None
    assert forget_cli("--account", "alice@d.example", built, out) == 0  # run again when the build is done


# -- 5. an opt-out seen is an opt-out applied -----------------------------------------------------

def test_an_opt_out_seen_in_a_crawl_removes_the_stored_copies_at_once(tmp_path, crawl_key):
    key = CrawlKey(crawl_key)
    d = "o.example"
    first = [post_by(10 + i, user, d, local=d) for i, user in enumerate(("xaver", "xaver", "yara", "zoe", "una"))]
    instance = FakeInstance(d, first)
    store = tmp_path / "crawl"
    with FakeMastodonServer(instance) as server:
        assert crawl_cli(store, server.url) == 0
        assert len(read_posts(store)) == 5
        # xaver turns `indexable` off and posts again; yara edits her post to carry #nobot, and it shows on
        # #csd; zoe moves to an account that opted out and posts again; sam is suspended.
        for s in instance.statuses:
            if s["account"]["username"] == "xaver":
                s["account"]["indexable"] = False
            if s["account"]["username"] == "yara":
                s["content"] = f"<p>{GERMAN} #NoBot</p>"
                s["tags"].append({"name": "csd", "url": f"https://{d}/tags/csd"})
        moved_to = {"id": "77", "username": "zoe2", "acct": "zoe2", "indexable": False, "discoverable": True}
        later = [post_by(30, "xaver", d, local=d, indexable=False), post_by(31, "zoe", d, local=d),
                 post_by(32, "sam", d, local=d)]
        later[1]["account"]["moved"] = moved_to
        later[2]["account"]["suspended"] = True
        instance.statuses += later
        assert crawl_cli(store, server.url, args=["--tag", "csd"]) == 0
    left = read_posts(store)
    assert authors(store) == {key.account_pseudonym("una@o.example")} and len(left) == 1
    stats = json.loads((store / "stats.json").read_text())
    assert stats["removed"] == {"author_opted_out": 3, "post_opted_out": 1}
    assert stats["instances"][server.url]["dropped"]["suspended"] == 1
    listed = Tombstones.load(store, key)
    assert {key.account_pseudonym(f"{u}@o.example") for u in ("xaver", "zoe")} <= set(listed.accounts)
    for never_stored in ("sam", "zoe2"):  # nothing of theirs is kept, and a later "yes" is theirs to give
        assert key.account_pseudonym(f"{never_stored}@o.example") not in listed.accounts


# -- 6. names in every spelling, in every file ----------------------------------------------------

# Every spelling of the test author (name, username, handle, addresses, phone) that no output may hold.
ANNA = ("anna", "müller", "mueller", "muller", "ａｎｎａ", "ｍüller", "annam", "instagram", "users/annam", "dot de",
        "@ example", "0170", "123 45 67", "１２３", "０１７０", "fotografie", "p.example/users")


def _anna_instance() -> FakeInstance:
    d = "p.example"
    text = (f"<p>{GERMAN} Liebe Grüße, Ａｎｎａ Ｍüller und #Anna_Müller.</p>"
            "<p>Schreibt an annam at example dot de oder annam @ example.org, instagram.com/annamueller oder "
            "p.example/users/annam; Tel. 0170 – 123 45 67 oder ０１７０ １２３４５６７. Gruß, annam</p>"
            "<p>#queer #annamueller #annamuellerfotografie</p>")
    anna = status(10, text, domain=d, created=T0, username="annam", tags=("queer", "annamueller",
                                                                          "annamuellerfotografie"))
    anna["account"]["display_name"] = "Anna Müller"
    other = status(11, f"<p>Nr. 11: {GERMAN}</p>", domain=d, created=T0, username="bea", tags=("queer",))
    return FakeInstance(d, [anna, other])


def test_no_output_of_a_crawl_refresh_forget_and_build_holds_the_author_in_any_spelling(tmp_path, capsys):
    with FakeMastodonServer(_anna_instance()) as server:
        text = crawl_to_corpus(server, tmp_path, capsys)
    [post] = [p for p in read_posts(tmp_path / "crawl") if "Grüße" in p["text"]]
    assert post["tags"] == ["queer"] and post["text"].endswith("Gruß, <user>\n\n#queer")
    assert "Liebe Grüße, <name> und <name>." in post["text"] and "<phone> oder <phone>" in post["text"]
    for spelling in ANNA:
        assert spelling.casefold() not in text, f"{spelling!r} found in the outputs"
