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
from datetime import timedelta

import idna
import pytest
from mastodon_scenario import GERMAN, T0, output_text, read_posts
from tqdm import tqdm

from queerbias import killpoint
from queerbias.cli import main
from queerbias.crawl.keys import CrawlKey
from queerbias.crawl.mastodon.testserver import FakeInstance, FakeMastodonServer, status
from queerbias.crawl.mastodon.tombstones import Tombstones

UA = "queerbias-test/1.0 (tests; contact: me@example.org)"
PAUSE_ENV = "QUEERBIAS_PAUSE_AT"  # killpoint's pause (spelt out, so that this file also runs against older code)


def a_label(host: str) -> str:
    return idna.encode(host, uts46=True).decode("ascii")


def _post(id_: int, username: str, host: str, *, local: str = "d.example", tags=("queer",), **fields) -> dict:
    """A status by `username@host` as the server `local` shows it (uri on `host`, written there)."""
    acct = username if host == local else f"{username}@{host}"
    return status(id_, f"<p>Nr. {id_}: {GERMAN}</p>", domain=local, created=T0 + timedelta(minutes=id_ % 1000),
                  acct=acct, username=username, uri=f"https://{host}/users/{username}/statuses/{id_}", tags=tags,
                  **fields)


def _crawl(store, *urls, args=()) -> int:
    return main(["crawl", "mastodon", "--out", str(store), *(a for u in urls for a in ("--instance", u)),
                 "--tag", "queer", "--user-agent", UA, *map(str, args)])


def _forget(*args) -> int:
    return main(["corpus", "forget", *map(str, args)])


def _build(store, out, *extra) -> int:
    return main(["corpus", "build", "--name", "c", "--source", str(store / "posts.jsonl"), "-o", str(out),
                 "--validation-fraction", "0.3", "--no-near-duplicates", *extra])


def _corpus_lines(out) -> list[dict]:
    return [json.loads(line) for split in ("train", "validation") if (out / f"{split}.jsonl").exists()
            for line in (out / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()]


def _authors(store) -> set[str]:
    return {p["account"] for p in read_posts(store)}


# -- 1. hosts as IDNA A-labels ------------------------------------------------------------------

BUECHER, BUERO = "bücher.example", "büro.example"


def test_handles_urls_and_deny_lists_match_internationalised_domains_in_either_spelling(tmp_path, crawl_key, capsys):
    key = CrawlKey(crawl_key)
    statuses = [
        _post(11, "anna", a_label(BUECHER)),  # Mastodon sends A-labels
        _post(12, "ben", BUERO),  # a server that sends the Unicode form
        _post(13, "fritz", a_label(BUECHER)),
        _post(14, "gina", BUERO),
        _post(15, "cem", a_label("münchen.example")),
        _post(16, "dora", "köln.example"),
        _post(17, "zed", "d.example"),
    ]
    deny = tmp_path / "deny.txt"
    deny.write_text(f"münchen.example\n{a_label('köln.example')}\n")
    store = tmp_path / "crawl"
    with FakeMastodonServer(FakeInstance("d.example", statuses)) as server:
        assert _crawl(store, server.url, args=["--deny-list", deny]) == 0
        stats = json.loads((store / "stats.json").read_text())["instances"][server.url]
        assert stats["dropped"] == {"instance_denied": 2} and stats["kept"] == 5
        capsys.readouterr()

        # Each person by the other spelling of their domain: by handle, by post address, by profile address.
        for args in (["--account", f"anna@{BUECHER}"], ["--account", f"ben@{a_label(BUERO)}"],
                     ["--url", f"https://{BUECHER}/@fritz/13"], ["--url", f"https://{a_label(BUERO)}/@gina"]):
            assert _forget(*args, store) == 0
            assert "removed 1 posts" in capsys.readouterr().out, args
        assert _authors(store) == {key.account_pseudonym("zed@d.example")}
        assert key.account_pseudonym(f"Anna@{BUECHER.upper()}") == key.account_pseudonym(f"anna@{a_label(BUECHER)}")

        # The pseudonyms on the removal list are the ones later crawls compute: nobody comes back.
        (store / "state.json").unlink()
        assert _crawl(store, server.url, args=["--deny-list", deny]) == 0
    stats = json.loads((store / "stats.json").read_text())["instances"][server.url]
    assert stats["dropped"]["removed_earlier"] == 4 and len(read_posts(store)) == 1


# -- 2. lost bookkeeping ------------------------------------------------------------------------

def _two_people(domain: str = "d.example") -> FakeInstance:
    return FakeInstance(domain, [_post(10 + i, user, domain, local=domain)
                                 for i, user in enumerate(("alice", "bob", "alice", "bob", "alice"))])


def test_lost_bookkeeping_never_readmits_a_removal(tmp_path, crawl_key, capsys):
    key = CrawlKey(crawl_key)
    alice, bob = key.account_pseudonym("alice@d.example"), key.account_pseudonym("bob@d.example")
    store = tmp_path / "crawl"
    with FakeMastodonServer(_two_people()) as server:
        assert _crawl(store, server.url) == 0
        # Without state.json the store is still found, and cleaned.
        (store / "state.json").unlink()
        assert _forget("--account", "bob@d.example", tmp_path) == 0
        assert "removed 2 posts" in capsys.readouterr().out and _authors(store) == {alice}

        # Removal list, state and statistics all lost: nothing crawls, refreshes or builds it ...
        for name in ("state.json", "stats.json", "tombstones.json"):
            (store / name).unlink()
        assert _crawl(store, server.url) == 2
        assert f"crawl mastodon --recover --out {store}" in capsys.readouterr().err
        assert main(["crawl", "mastodon", "--refresh", "--out", str(store), "--user-agent", UA]) == 2
        assert _build(store, tmp_path / "corpus") == 2
        assert "--recover" in capsys.readouterr().err
        # ... but a takedown still works on it, and leaves it marked as needing recovery.
        assert _forget("--account", "alice@d.example", tmp_path) == 0
        report = capsys.readouterr().out
        assert "removed 3 posts; its bookkeeping was lost" in report and not read_posts(store)
        assert _crawl(store, server.url) == 2
        capsys.readouterr()

        assert main(["crawl", "mastodon", "--recover", "--out", str(store)]) == 0
        assert "repeat every takedown you recorded" in capsys.readouterr().out
        assert _crawl(store, server.url) == 0
        assert alice not in _authors(store)  # the takedown made while the list was lost holds
        assert _build(store, tmp_path / "corpus") == 2  # not refreshed since the recovery
        assert "run `queerbias crawl mastodon --refresh" in capsys.readouterr().err
        assert main(["crawl", "mastodon", "--refresh", "--out", str(store), "--user-agent", UA]) == 0
        assert _build(store, tmp_path / "corpus") == 0

        # A removal list copied from another store is refused, even one holding as many entries.
        other = tmp_path / "other"
        assert _crawl(other, server.url) == 0
        assert _forget("--account", "bob@d.example", "--account", "alice@d.example", other) == 0
        assert all(a >= b for a, b in zip(Tombstones.load(other, key).counts().values(),
                                           Tombstones.load(store, key).counts().values()))
        shutil.copy(other / "tombstones.json", store / "tombstones.json")
        capsys.readouterr()
        assert _crawl(store, server.url) == 2
    assert "copied from another store or corpus" in capsys.readouterr().err
    assert bob not in _authors(other)


# -- 3. a takedown killed at any point, a build killed before it finished -----------------------------

def _in_child(args: list[str], env: dict[str, str]) -> int:
    """Run the CLI in a forked child with `env` set; its exit status, or -SIGNAL when it was killed. (Forked,
    not started afresh: no second import of the CLI, a tenth of the time.)"""
    tqdm.monitor_interval = 0  # no progress-bar monitor thread that could hold a lock across the fork
    pid = os.fork()
    if pid == 0:  # the child: no pytest teardown, no servers (none run now)
        code = 1
        try:
            os.environ.update(env)
            code = main(args)
        finally:
            os._exit(code)
    _, wait_status = os.waitpid(pid, 0)
    return -os.WTERMSIG(wait_status) if os.WIFSIGNALED(wait_status) else os.WEXITSTATUS(wait_status)


def _snapshot(root) -> dict:
    """What a takedown leaves: posts, corpus lines, statistics (less the time), removal lists' entries."""
    key = CrawlKey(os.environ["QUEERBIAS_CRAWL_KEY_FILE"])
    stats = json.loads((root / "corpus" / "stats.json").read_text())
    stats.pop("forgotten_at")
    stats.pop("removal_list", None)  # a list's id is its own: compared below by its entries
    return {"posts": sorted(json.dumps(p) for p in read_posts(root / "crawl")),
            "lines": sorted(json.dumps(r) for r in _corpus_lines(root / "corpus")), "stats": stats,
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
        assert _crawl(pristine / "crawl", server.url) == 0
    assert _build(pristine / "crawl", pristine / "corpus") == 0
    return pristine


def test_a_takedown_killed_at_any_point_is_finished_by_running_it_again(built, tmp_path, capsys):
    args = ["corpus", "forget", "--account", "alice@d.example"]
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
        code = _in_child([*args, str(root)], {killpoint.ENV: f"removal:{point}"})
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
        assert _in_child([*build, "-o", str(out)], {killpoint.ENV: point}) == -signal.SIGKILL
        assert not (out / "stats.json").exists()
        assert list(out.glob(".*.jsonl.*.tmp")) or alice in output_text(out)  # what the killed build left
    capsys.readouterr()
    assert _forget("--account", "alice@d.example", tmp_path) == 0
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
    builder = threading.Thread(target=lambda: result.setdefault("code", _build(store, out)))
    builder.start()
    while True:  # the build opens the pipe when it has read every source (no deadline: it gets there)
        try:
            gate = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:
            assert builder.is_alive(), "the build finished without pausing where a takedown can reach it"
            time.sleep(0.01)
    try:
        assert _forget("--account", "alice@d.example", built, out) == 2  # the store is done; the corpus is in use
        assert f"{out} is in use by another queerbias process" in capsys.readouterr().err
        assert alice not in _authors(store)
    finally:
        os.close(gate)
        builder.join()
    monkeypatch.delenv(PAUSE_ENV)
    assert result["code"] == 0
    assert all(r["account"] != alice for r in _corpus_lines(out))
    stats = json.loads((out / "stats.json").read_text())
    assert stats["removed_while_building"] == 3 and stats["sources"]["mastodon"]["first_published"] is None
    assert _forget("--account", "alice@d.example", built, out) == 0  # run again when the build is done


# -- 5. an opt-out seen is an opt-out applied -----------------------------------------------------

def test_an_opt_out_seen_in_a_crawl_removes_the_stored_copies_at_once(tmp_path, crawl_key):
    key = CrawlKey(crawl_key)
    d = "o.example"
    first = [_post(10 + i, user, d, local=d) for i, user in enumerate(("xaver", "xaver", "yara", "zoe", "una"))]
    instance = FakeInstance(d, first)
    store = tmp_path / "crawl"
    with FakeMastodonServer(instance) as server:
        assert _crawl(store, server.url) == 0
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
        later = [_post(30, "xaver", d, local=d, indexable=False), _post(31, "zoe", d, local=d),
                 _post(32, "sam", d, local=d)]
        later[1]["account"]["moved"] = moved_to
        later[2]["account"]["suspended"] = True
        instance.statuses += later
        assert _crawl(store, server.url, args=["--tag", "csd"]) == 0
    left = read_posts(store)
    assert _authors(store) == {key.account_pseudonym("una@o.example")} and len(left) == 1
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
    store, corpus = tmp_path / "crawl", tmp_path / "corpus"
    with FakeMastodonServer(_anna_instance()) as server:
        assert _crawl(store, server.url) == 0
        assert main(["crawl", "mastodon", "--refresh", "--out", str(store), "--user-agent", UA]) == 0
    [post] = [p for p in read_posts(store) if "Grüße" in p["text"]]
    assert post["tags"] == ["queer"] and post["text"].endswith("Gruß, <user>\n\n#queer")
    assert "Liebe Grüße, <name> und <name>." in post["text"] and "<phone> oder <phone>" in post["text"]
    assert _forget("--account", "bea@p.example", tmp_path) == 0
    assert _build(store, corpus, "--min-words", "post=1") == 0
    printed = capsys.readouterr()
    text = (output_text(store, corpus) + printed.out + printed.err).casefold()
    for spelling in ANNA:
        assert spelling.casefold() not in text, f"{spelling!r} found in the outputs"
