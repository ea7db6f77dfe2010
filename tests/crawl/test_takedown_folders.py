"""Issue 48, takedowns: every folder that can be done is done and every other one is named; symbolic links are
followed once; nothing is written into a folder no queerbias build wrote; an emptied store that lost its
bookkeeping is refused; a handle that matches nothing says so.

Fake Mastodon servers on 127.0.0.1, the real Mastodon.py client, the real CLI and real folders.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from cli_scenario import authors, build_cli, corpus_lines, crawl_cli, forget_cli, in_child, post_by

from queerbias.cli import main
from queerbias.crawl.folder import FolderLock
from queerbias.crawl.keys import KEY_ENV, CrawlKey
from queerbias.crawl.mastodon.testserver import FakeInstance, FakeMastodonServer

REPO = Path(__file__).resolve().parents[2]


def _people(domain: str = "d.example") -> FakeInstance:
    return FakeInstance(domain, [post_by(10 + i, user, domain, local=domain)
                                 for i, user in enumerate(("alice", "bob", "alice", "bob"))])


@pytest.fixture
def crawled(tmp_path):
    """Two stores of alice and bob (`a`, `b`) and a corpus built from each (`ca`, `cb`), under `tmp_path/root`."""
    root = tmp_path / "root"
    with FakeMastodonServer(_people()) as server:
        for name in ("a", "b"):
            assert crawl_cli(root / name, server.url) == 0
            assert build_cli(root / name, root / f"c{name}") == 0
    return root


def _alice(crawl_key) -> str:
    return CrawlKey(crawl_key).account_pseudonym("alice@d.example")


def _holds(folder: Path, pseudonym: str) -> bool:
    return pseudonym in (authors(folder) if (folder / "posts.jsonl").exists()
                         else {line.get("account") for line in corpus_lines(folder)})


def test_a_symlinked_raw_folder_is_followed_once(crawled, tmp_path, crawl_key, capsys):
    alice = _alice(crawl_key)
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    (corpora / "raw").symlink_to(crawled / "a", target_is_directory=True)  # the store lives elsewhere
    (corpora / "again").symlink_to(crawled / "a", target_is_directory=True)  # a second link to the same store
    shutil.move(crawled / "ca", corpora / "ca")
    assert forget_cli("--account", "alice@d.example", corpora) == 0
    report = capsys.readouterr().out
    assert not _holds(crawled / "a", alice) and not _holds(corpora / "ca", alice)
    assert report.count("posts.jsonl: removed 2 posts") == 1  # one store, reached by two links


@pytest.mark.parametrize("busy", ["a", "ca"])
def test_a_busy_folder_costs_only_itself_and_is_named(crawled, crawl_key, capsys, busy):
    alice = _alice(crawl_key)
    lock = FolderLock(crawled / busy, "test")
    try:
        assert forget_cli("--account", "alice@d.example", crawled) == 2
        printed = capsys.readouterr()
        for folder in ("a", "b", "ca", "cb"):
            assert _holds(crawled / folder, alice) is (folder == busy), folder
        assert f"{crawled / busy} is in use by another queerbias process" in printed.err
        assert len(printed.err.splitlines()) == 1 and "run the same command again" in printed.err
    finally:
        lock.release()
    assert forget_cli("--account", "alice@d.example", crawled) == 0  # and when it is free, the rerun finishes
    assert not any(_holds(crawled / folder, alice) for folder in ("a", "b", "ca", "cb"))


def test_an_emptied_store_that_lost_its_bookkeeping_is_refused_not_refilled(tmp_path, crawl_key, capsys):
    store = tmp_path / "crawl"
    only_alice = FakeInstance("d.example", [post_by(10, "alice", "d.example")])
    with FakeMastodonServer(only_alice) as server:
        assert crawl_cli(store, server.url) == 0
        assert forget_cli("--account", "alice@d.example", store) == 0
        for name in ("tombstones.json", "state.json", "stats.json"):
            (store / name).unlink()
        capsys.readouterr()
        assert crawl_cli(store, server.url) == 2  # the store was a store: its removals could come back
        assert f"crawl mastodon --recover --out {store}" in capsys.readouterr().err
        assert crawl_cli(store, server.url) == 2  # the refusal wrote nothing that would let a rerun through
    assert (store / "posts.jsonl").read_text() == ""


def test_a_handle_that_matches_nothing_says_so_and_names_the_instances_seen(tmp_path, capsys):
    store = tmp_path / "crawl"
    with FakeMastodonServer(_people("demo.example")) as server:
        assert crawl_cli(store, server.url) == 0
        wrong = f"alice@{server.netloc}"  # the server's address, not its accounts' domain
        capsys.readouterr()
        assert forget_cli("--account", wrong, store) == 0
        report = capsys.readouterr().out
    assert "nothing was left to remove" not in report
    assert "no stored record has account pseudonym" in report
    assert f"the stores here crawled {server.url} (accounts @demo.example)" in report
    assert forget_cli("--account", "alice@demo.example", store) == 0
    assert forget_cli("--account", "alice@demo.example", store) == 0  # a finished rerun says what it is
    report = capsys.readouterr().out.splitlines()[-1]
    assert report.endswith("nothing was left to remove") and "no stored record" not in report


def test_the_shipped_demo_corpus_is_left_as_it_is(crawled, tmp_path, capsys):
    demo = tmp_path / "root" / "demo"
    shutil.copytree(REPO / "corpora" / "demo", demo)
    before = {p.name: p.read_bytes() for p in demo.iterdir()}
    assert forget_cli("--account", "alice@d.example", crawled) == 0
    assert f"{demo}: left alone (no queerbias build wrote it" in capsys.readouterr().out
    assert {p.name: p.read_bytes() for p in demo.iterdir()} == before  # no removal list, no lock file


def test_split_files_no_build_wrote_that_hold_the_person_are_named(crawled, tmp_path, crawl_key, capsys):
    copied = tmp_path / "root" / "copy"
    copied.mkdir()
    shutil.copy(crawled / "ca" / "train.jsonl", copied / "train.jsonl")  # lines copied out of a corpus by hand
    assert forget_cli("--account", "alice@d.example", crawled) == 2
    assert f"{copied}: holds lines of this person, but no queerbias build wrote it" in capsys.readouterr().err
    assert not _holds(crawled / "ca", _alice(crawl_key)) and sorted(os.listdir(copied)) == ["train.jsonl"]


def _forget_as_nobody(tree: Path, key: Path) -> int:
    """`corpus forget --account alice@d.example TREE` in a child that cannot read what mode 000 closes. Root reads
    everything, so as root the child first becomes `nobody`, to whom the tree and the key (both copied outside
    pytest's private folders) then belong."""
    args = ["corpus", "forget", "--account", "alice@d.example", "--key-file", str(key), str(tree)]
    if os.geteuid() != 0:
        return in_child(args, {})
    for path in [tree.parent, *tree.parent.rglob("*")]:
        os.chown(path, 65534, 65534, follow_symlinks=False)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgid(65534)
            os.setuid(65534)
            code = main(args)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.WEXITSTATUS(status)


def test_an_unreadable_folder_is_named_and_the_others_are_done(crawled, crawl_key, capfd):
    place = Path(tempfile.mkdtemp(prefix="queerbias-forget-"))
    try:
        tree, key = place / "root", place / "crawl.key"
        shutil.copytree(crawled, tree)
        shutil.copy(crawl_key, key)
        (tree / "locked").mkdir()
        (tree / "locked").chmod(0)
        code = _forget_as_nobody(tree, key)
        (tree / "locked").chmod(0o700)
        assert code == 2
        assert f"{tree / 'locked'}: cannot be read (Permission denied)" in capfd.readouterr().err
        assert not any(_holds(tree / folder, _alice(crawl_key)) for folder in ("a", "b", "ca", "cb"))
    finally:
        shutil.rmtree(place)


def test_a_post_link_that_leads_nowhere_while_a_store_is_busy_says_to_run_again(crawled, capsys):
    lock = FolderLock(crawled / "a", "test")
    try:
        assert forget_cli("--url", "https://d.example/notice/1", crawled) == 2
    finally:
        lock.release()
    err = capsys.readouterr().err
    assert "is neither a stored post nor a profile URL (https://instance/@user) in the folders that could be read" \
           in err and f"{crawled / 'a'} is in use" in err
    assert json.loads((crawled / "ca" / "stats.json").read_text()).get("forgotten_after_build") is None
    assert os.environ[KEY_ENV]  # the tests' own key, never the user's
