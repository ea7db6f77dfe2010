"""An author on a removal list stays out even where none of their posts is listed (issue 54).

A takedown by account lists the account before it lists and removes the author's stored posts, so a
takedown killed in between leaves a store whose list names the author and none of the posts. Every
later build, crawl and refresh must then drop the author's posts by the account alone, the ones
stored and the ones the author writes later: the same check keeps anyone who opted out, or was
taken down, out of every later corpus, whatever ids their posts get.

The real Mastodon test server, the real CLI, and a kill at a `queerbias.killpoint`.
"""

from __future__ import annotations

import json
import shutil
import signal

from cli_scenario import build_cli, corpus_lines, crawl_cli, in_child, post_by
from mastodon_scenario import UA, read_posts

from queerbias import killpoint
from queerbias.cli import main
from queerbias.crawl.keys import CrawlKey
from queerbias.crawl.mastodon.testserver import FakeInstance, FakeMastodonServer
from queerbias.crawl.mastodon.tombstones import Tombstones


def test_a_removed_authors_unlisted_posts_are_dropped_by_build_crawl_and_refresh(tmp_path, crawl_key, capsys):
    key = CrawlKey(crawl_key)
    alice, bob = key.account_pseudonym("alice@d.example"), key.account_pseudonym("bob@d.example")
    instance = FakeInstance("d.example", [post_by(10 + i, user, "d.example")
                                          for i, user in enumerate(("alice", "bob", "alice", "bob", "alice"))])
    store = tmp_path / "taken-down"
    with FakeMastodonServer(instance) as server:
        assert crawl_cli(store, server.url) == 0
        stored = {p["doc_id"] for p in read_posts(store) if p["account"] == alice}
        assert len(stored) == 3

        # The takedown is killed once the account is listed, before any of alice's posts is.
        forget = ["corpus", "forget", "--account", "alice@d.example", str(store)]
        assert in_child(forget, {killpoint.ENV: "removal:1"}) == -signal.SIGKILL
        listed = Tombstones.load(store, key)
        assert alice in listed.accounts and not {f"mastodon:{p}" for p in listed.posts} & stored
        assert {p["account"] for p in read_posts(store)} == {alice, bob}
        capsys.readouterr()
        for folder in ("build", "crawl", "refresh"):
            shutil.copytree(store, tmp_path / folder)

        assert build_cli(tmp_path / "build", tmp_path / "corpus") == 0
        lines = corpus_lines(tmp_path / "corpus")
        assert lines and {line["account"] for line in lines} == {bob}

        # alice writes again: a post whose id no list can hold yet.
        instance.statuses.append(post_by(20, "alice", "d.example"))
        assert crawl_cli(tmp_path / "crawl", server.url) == 0
        assert main(["crawl", "mastodon", "--refresh", "--out", str(tmp_path / "refresh"), "--user-agent", UA]) == 0
    after = {folder: ({p["account"] for p in read_posts(tmp_path / folder)},
                      json.loads((tmp_path / folder / "stats.json").read_text())["removed"])
             for folder in ("crawl", "refresh")}
    # alice's stored posts were purged when the store opened; bob's are all that is left
    assert after == {"crawl": ({bob}, {"forgotten": 3}), "refresh": ({bob}, {"forgotten": 3})}
    dropped = json.loads((tmp_path / "crawl" / "stats.json").read_text())["instances"][server.url]["dropped"]
    assert dropped == {"removed_earlier": 1}  # the new post, as the crawl saw it
