"""Store recovery, filters and cleaning on their own."""

from __future__ import annotations

import json

from queerbias.crawl.mastodon.cleaning import clean_post_html
from queerbias.crawl.mastodon.filters import drop_reason, opted_out
from queerbias.crawl.mastodon.settings import default_tags, normalise_instance
from queerbias.crawl.mastodon.store import POSTS, STATE, CrawlStore, Pseudonymiser
from queerbias.text.keywords import KeywordMatcher

MATCHER = KeywordMatcher()


def _record(uri: str) -> dict:
    return {"doc_id": uri, "uri": uri, "text": "queer und froh"}


def test_store_cuts_uncommitted_and_torn_lines_on_reopen(tmp_path):
    store = CrawlStore(tmp_path)
    store.commit("https://a.example", "a.example", [_record("u1"), _record("u2")], feed="tag:queer",
                 cursor={"newest_id": None, "pass_max_id": "9"})
    store.close()
    with open(tmp_path / POSTS, "a", encoding="utf-8") as handle:  # a crash after the records, before the state
        handle.write(json.dumps(_record("u3")) + "\n" + '{"doc_id": "u4", "ur')
    store = CrawlStore(tmp_path)
    assert [json.loads(line)["uri"] for line in (tmp_path / POSTS).read_text().splitlines()] == ["u1", "u2"]
    assert store.cursor("https://a.example", "tag:queer") == {"newest_id": None, "pass_max_id": "9"}
    store.commit("https://b.example", "b.example", [_record("u2"), _record("u3")])
    store.finalize()
    store.close()
    records = [json.loads(line) for line in (tmp_path / POSTS).read_text().splitlines()]
    assert [(r["uri"], r["seen_on"]) for r in records] == [
        ("u1", ["a.example"]), ("u2", ["a.example", "b.example"]), ("u3", ["b.example"])]
    state = json.loads((tmp_path / STATE).read_text())
    assert state["records"] == 3 and state["duplicates"] == 1
    assert not list(tmp_path.glob(".*.tmp"))  # atomic writes leave no temp files


def test_pseudonyms_are_salted_and_stable(tmp_path):
    first = Pseudonymiser(tmp_path / "salt")
    assert first("Alice@a.example") == first("alice@a.example") == Pseudonymiser(tmp_path / "salt")("alice@a.example")
    assert first("alice@a.example") != Pseudonymiser(tmp_path / "other")("alice@a.example")
    assert (tmp_path / "salt").stat().st_mode & 0o077 == 0


def _status(**account) -> dict:
    return {"content": "<p>x</p>", "language": "de", "tags": [], "spoiler_text": "CW",
            "account": {"bot": False, "indexable": True, "note": "", "fields": [], **account}}


def test_opt_outs():
    assert opted_out({"indexable": False})
    assert opted_out({"noindex": True})
    assert opted_out({"note": "<p>Hallo #NoIndex</p>"})
    assert opted_out({"fields": [{"name": "Crawler", "value": "#nobot"}]})
    assert not opted_out({"indexable": None, "note": "#nobotanik-Fan"})
    assert not opted_out({})  # servers before 4.2 do not send `indexable`


def test_drop_reasons_in_order():
    text = "Wir sind queer und feiern heute gemeinsam ein großes Fest im Park."
    assert drop_reason(_status(), text, MATCHER) is None  # a content warning is kept
    assert drop_reason(_status(bot=True, indexable=False), text, MATCHER) == "opted_out"
    assert drop_reason(_status(bot=True), text, MATCHER) == "bot"
    assert drop_reason({**_status(), "tags": [{"name": "NSFW"}]}, text, MATCHER) == "nsfw"
    assert drop_reason(_status(), "Dies ist eine automatische Nachricht über queere Themen.", MATCHER) == "automated"
    assert drop_reason(_status(), "Wir feiern heute gemeinsam ein großes Fest im Park.", MATCHER) == "no_keyword"
    assert drop_reason(_status(), "", MATCHER) == "empty"


def test_cleaning_keeps_times_and_unicode_emoji():
    html = "<p>Treffen um 10:30:00 :party_parrot: 🎉 für <a href='https://x.example'>https://x.example</a> " \
           "alle @carla@c.example und mail@example.org</p><p>#Queer #foo #LGBTQIA</p><p>#foo #bar</p>"
    assert clean_post_html(html, MATCHER) == "Treffen um 10:30:00 🎉 für alle und mail@example.org\n\n#Queer #LGBTQIA"


def test_settings_helpers():
    assert normalise_instance("Chaos.Social/") == "https://chaos.social"
    assert normalise_instance("http://127.0.0.1:8080") == "http://127.0.0.1:8080"
    tags = default_tags()
    assert {"transmann", "nichtbinär", "queer", "lesbisch"} <= set(tags) and len(tags) == len(set(tags))
