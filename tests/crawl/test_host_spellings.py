"""Issue 48, host spellings: one canonical form for hosts, handles and URLs (percent-decoded, NFKC, IDNA 2008
A-labels, lower case, no trailing dot, no tracking parameters), for every pseudonym, comparison and list.

Fake Mastodon servers on 127.0.0.1, the real Mastodon.py client and the real CLI.
"""

from __future__ import annotations

import json

import pytest
from cli_scenario import a_label, authors, crawl_cli, forget_cli, post_by
from mastodon_scenario import read_posts

from queerbias.crawl.keys import CrawlKey
from queerbias.crawl.mastodon.testserver import FakeInstance, FakeMastodonServer

BUECHER = "bücher.example"


@pytest.mark.parametrize("spelling", [
    "https://b%C3%BCcher.example/@AnnaM",  # percent-encoded, as RFC 3986 allows and browsers read it
    "https://B%C3%9CCHER.EXAMPLE./@annam/",  # and in capitals, with a trailing dot
    "https://ｂüｃｈｅｒ．ｅｘａｍｐｌｅ/@annam",  # fullwidth letters and dot
])
def test_a_profile_url_in_any_spelling_of_the_host_takes_the_person_out(tmp_path, crawl_key, capsys, spelling):
    key = CrawlKey(crawl_key)
    store = tmp_path / "crawl"
    with FakeMastodonServer(FakeInstance("d.example", [post_by(10, "annam", a_label(BUECHER)),
                                                       post_by(11, "zed", "d.example")])) as server:
        assert crawl_cli(store, server.url) == 0
    capsys.readouterr()
    assert forget_cli("--url", spelling, store) == 0
    assert "removed 1 posts" in capsys.readouterr().out
    assert authors(store) == {key.account_pseudonym("zed@d.example")}


def test_a_handle_in_fullwidth_letters_or_percent_encoded_names_the_person(tmp_path, crawl_key, capsys):
    key = CrawlKey(crawl_key)
    store = tmp_path / "crawl"
    with FakeMastodonServer(FakeInstance("d.example", [post_by(10, "annam", a_label(BUECHER)),
                                                       post_by(11, "jo", a_label(BUECHER))])) as server:
        assert crawl_cli(store, server.url) == 0
    for handle in ("ａｎｎａｍ＠ｂüｃｈｅｒ．ｅｘａｍｐｌｅ", "@Jo@B%C3%BCcher.Example."):
        capsys.readouterr()
        assert forget_cli("--account", handle, store) == 0
        assert "removed 1 posts" in capsys.readouterr().out, handle
    assert authors(store) == set()
    assert key.account_pseudonym("ａｎｎａｍ＠ｂüｃｈｅｒ．ｅｘａｍｐｌｅ") == key.account_pseudonym(f"annam@{a_label(BUECHER)}")


def test_a_post_removed_for_an_opt_out_stays_out_whichever_spelling_of_its_host_a_server_sends(tmp_path):
    uri = f"https://{a_label(BUECHER)}/users/anna/statuses/5"
    written = post_by(5, "anna", a_label(BUECHER))
    store = tmp_path / "crawl"
    origin_copy = FakeInstance("d.example", [written])
    with FakeMastodonServer(origin_copy) as d:
        assert crawl_cli(store, d.url) == 0
        assert len(read_posts(store)) == 1
        # She opts this post out, and it shows on #csd (a feed not paged before): the crawl removes it at once.
        written["content"] += "<p>#NoBot</p>"
        written["tags"].append({"name": "csd", "url": "https://d.example/tags/csd"})
        assert crawl_cli(store, d.url, args=["--tag", "csd"]) == 0
        assert read_posts(store) == []
    # Two other servers show copies without the tag, writing the uri's host in Unicode and in capitals.
    for n, spelling in enumerate((uri.replace(a_label(BUECHER), BUECHER),
                                  uri.replace(a_label(BUECHER), "BÜCHER.EXAMPLE")), 1):
        copy = post_by(5, "anna", a_label(BUECHER), local=f"e{n}.example")
        copy["uri"] = spelling
        with FakeMastodonServer(FakeInstance(f"e{n}.example", [copy])) as e:
            assert crawl_cli(store, e.url) == 0
            stats = json.loads((store / "stats.json").read_text())["instances"][e.url]
        assert stats["dropped"] == {"removed_earlier": 1}, spelling
    assert read_posts(store) == []


def test_the_deny_list_holds_against_a_percent_encoded_uri_and_an_account_on_a_denied_domain(tmp_path):
    encoded = post_by(10, "anna", a_label(BUECHER))
    encoded["uri"] = "https://b%C3%BCcher.example/users/anna/statuses/10"
    elsewhere = post_by(11, "ben", a_label(BUECHER))
    elsewhere["uri"] = "https://relay.example/objects/11"  # the uri names another server; the account does not
    kept = post_by(12, "zed", "d.example")
    deny = tmp_path / "deny.txt"
    deny.write_text(f"{BUECHER}\n")
    with FakeMastodonServer(FakeInstance("d.example", [encoded, elsewhere, kept])) as server:
        assert crawl_cli(tmp_path / "crawl", server.url, args=["--deny-list", deny]) == 0
        stats = json.loads((tmp_path / "crawl" / "stats.json").read_text())["instances"][server.url]
    assert stats["dropped"] == {"instance_denied": 2} and stats["kept"] == 1


MASTODON_EXPORT = """#domain,#severity,#reject_media,#reject_reports,#public_comment,#obfuscate
bücher.example,suspend,false,false,"Spam, #1",false
XN--BRO-HOA.example.,silence,true,false,,false
"""


def test_a_deny_list_in_mastodons_own_export_format_is_read(tmp_path):
    statuses = [post_by(10, "anna", a_label(BUECHER)), post_by(11, "ben", a_label("büro.example")),
                post_by(12, "zed", "d.example")]
    deny = tmp_path / "domain_blocks.csv"
    deny.write_text(MASTODON_EXPORT)
    with FakeMastodonServer(FakeInstance("d.example", statuses)) as server:
        assert crawl_cli(tmp_path / "crawl", server.url, args=["--deny-list", deny]) == 0
        stats = json.loads((tmp_path / "crawl" / "stats.json").read_text())["instances"][server.url]
    assert stats["dropped"] == {"instance_denied": 2} and stats["kept"] == 1


def test_a_deny_list_entry_that_is_no_host_is_refused_naming_its_row(tmp_path, capsys):
    deny = tmp_path / "deny.txt"
    deny.write_text("# hosts\nbücher.example\nkein host!\n")
    assert crawl_cli(tmp_path / "crawl", "http://127.0.0.1:9", args=["--deny-list", deny]) == 2
    err = capsys.readouterr().err
    assert f"{deny}, row 3, field 'domain': not a host name: 'kein host!'" in err and len(err.splitlines()) == 1
