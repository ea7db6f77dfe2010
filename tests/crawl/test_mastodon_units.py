"""Store recovery, keys, filters, cleaning and settings on their own."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from email.utils import format_datetime

import pytest
from mastodon import MastodonAPIError

from queerbias.crawl.agent import build_user_agent
from queerbias.crawl.backoff import retry_after_seconds
from queerbias.crawl.keys import CrawlKey
from queerbias.crawl.mastodon.cleaning import clean_html
from queerbias.crawl.mastodon.client import describe_error
from queerbias.crawl.mastodon.etiquette import is_denied, rule_against_ai
from queerbias.crawl.mastodon.filters import drop_reason, opted_out
from queerbias.crawl.mastodon.records import Post
from queerbias.crawl.mastodon.settings import CrawlSettings, default_tags, normalise_instance
from queerbias.crawl.mastodon.store import POSTS, REID, STATE, STATS, CrawlStore
from queerbias.crawl.quoting import quote
from queerbias.errors import QueerbiasError
from queerbias.text.keywords import KeywordMatcher

MATCHER = KeywordMatcher()
UA = "test (me@example.org)"


def _post(key: CrawlKey, uri: str, account: str = "alice@a.example") -> Post:
    pseudonym = key.post_pseudonym(uri)
    record = {"doc_id": "mastodon:" + pseudonym, "account": key.account_pseudonym(account), "text": "queer und froh"}
    return Post(pseudonym, record, {"uri": uri, "url": uri, "account": account, "sources": {}, "checked_at": ""},
                served_by_origin=False)


def _uris(folder) -> list[str]:
    return [json.loads(line)["doc_id"] for line in (folder / POSTS).read_text().splitlines()]


def test_store_cuts_uncommitted_and_torn_lines_on_reopen(tmp_path, crawl_key):
    key = CrawlKey(crawl_key)
    store = CrawlStore(tmp_path, key)
    store.commit("https://a.example", "a.example", [_post(key, "u1"), _post(key, "u2")], feed="tag:queer",
                 cursor={"newest_id": None, "pass_max_id": "9"})
    store.close()
    u3 = _post(key, "u3")
    with open(tmp_path / POSTS, "a", encoding="utf-8") as handle:  # a crash after the records, before the state
        handle.write(json.dumps({**u3.record, "seen_on": ["a.example"]}) + "\n" + '{"doc_id": "u4", "ur')
    store = CrawlStore(tmp_path, key)
    assert _uris(tmp_path) == [_post(key, u).record["doc_id"] for u in ("u1", "u2")]
    assert store.cursor("https://a.example", "tag:queer") == {"newest_id": None, "pass_max_id": "9"}
    store.commit("https://b.example", "b.example", [_post(key, "u2"), u3])
    store.finalize()
    store.close()
    records = [json.loads(line) for line in (tmp_path / POSTS).read_text().splitlines()]
    assert [r["seen_on"] for r in records] == [["a.example"], ["a.example", "b.example"], ["b.example"]]
    state = json.loads((tmp_path / STATE).read_text())
    assert state["records"] == 3 and state["duplicates"] == 1
    assert len((tmp_path / REID).read_text().splitlines()) == 3
    assert not list(tmp_path.glob(".*.tmp"))  # atomic writes leave no temp files


def test_missing_state_rebuilds_from_the_posts_and_never_truncates(tmp_path, crawl_key):
    key = CrawlKey(crawl_key)
    store = CrawlStore(tmp_path, key)
    store.commit("https://a.example", "a.example", [_post(key, f"u{i}") for i in range(5)])
    store.close()
    before = (tmp_path / POSTS).read_bytes()
    (tmp_path / STATE).unlink()  # "start afresh" the way people do it
    with open(tmp_path / POSTS, "ab") as handle:
        handle.write(b'{"doc_id": "mastodon:torn", "acc')  # and a torn tail on top
    store = CrawlStore(tmp_path, key)
    assert store.rebuilt
    store.commit("https://a.example", "a.example", [_post(key, "u1"), _post(key, "u9")])
    store.close()
    after = (tmp_path / POSTS).read_bytes()
    assert after.startswith(before) and len(after.splitlines()) == 6  # u1 a duplicate, u9 new, nothing torn
    assert json.loads((tmp_path / STATE).read_text())["records"] == 6


def test_missing_state_with_another_key_is_refused_not_rebuilt(tmp_path, crawl_key):
    key = CrawlKey(crawl_key)
    store = CrawlStore(tmp_path / "out", key)
    store.commit("https://a.example", "a.example", [_post(key, "u1")])
    store.close()
    (tmp_path / "out" / STATE).unlink()
    (tmp_path / "out" / STATS).unlink()
    other = CrawlKey(tmp_path / "other.key")
    with pytest.raises(QueerbiasError, match="does not open with this key"):
        CrawlStore(tmp_path / "out", other)
    assert len(_uris(tmp_path / "out")) == 1


def test_second_writer_is_refused_while_the_first_holds_the_folder(tmp_path, crawl_key):
    key = CrawlKey(crawl_key)
    first = CrawlStore(tmp_path, key)
    with pytest.raises(QueerbiasError, match="in use by another queerbias process"):
        CrawlStore(tmp_path, key)
    first.close()
    CrawlStore(tmp_path, key).close()  # released with the first store


def test_outputs_are_private(tmp_path, crawl_key):
    key = CrawlKey(crawl_key)
    out = tmp_path / "new" / "out"
    store = CrawlStore(out, key)
    store.commit("https://a.example", "a.example", [_post(key, "u1")])
    store.close()
    assert out.stat().st_mode & 0o777 == 0o700
    assert {p.name: p.stat().st_mode & 0o777 for p in out.iterdir()} == {
        name: 0o600 for name in (POSTS, REID, STATE, STATS, "tombstones.json", ".lock")}


def test_key_pseudonyms_and_sealing(tmp_path):
    key = CrawlKey(tmp_path / "keys" / "crawl.key")
    assert (tmp_path / "keys" / "crawl.key").stat().st_mode & 0o777 == 0o600
    same = CrawlKey(tmp_path / "keys" / "crawl.key")
    other = CrawlKey(tmp_path / "other.key")
    assert key.account_pseudonym("@Alice@A.example") == same.account_pseudonym("alice@a.example")
    assert key.account_pseudonym("alice@a.example") != other.account_pseudonym("alice@a.example")
    assert key.fingerprint == same.fingerprint != other.fingerprint
    blob = key.seal("p1", {"uri": "https://a.example/users/alice/statuses/1"})
    assert "alice" not in blob and same.unseal("p1", blob)["uri"].endswith("/1")
    with pytest.raises(QueerbiasError, match="does not open"):
        other.unseal("p1", blob)
    with pytest.raises(QueerbiasError, match="does not open"):
        key.unseal("p2", blob)  # bound to its post


def test_key_must_be_outside_the_output_and_private(tmp_path):
    with pytest.raises(QueerbiasError, match="lies inside the output folder"):
        CrawlKey(tmp_path / "out" / "crawl.key", outputs=(tmp_path / "out",))
    path = tmp_path / "crawl.key"
    CrawlKey(path)
    os.chmod(path, 0o644)
    with pytest.raises(QueerbiasError, match="readable by others"):
        CrawlKey(path)
    os.chmod(path, 0o600)
    path.write_text("not hex")
    with pytest.raises(QueerbiasError, match="not 64 hex digits"):
        CrawlKey(path)


def _status(visibility="public", tags=(), content="<p>x</p>", **account) -> dict:
    return {"content": content, "language": "de", "tags": [{"name": t} for t in tags], "spoiler_text": "CW",
            "visibility": visibility, "account": {"bot": False, "indexable": True, "note": "", "fields": [],
                                                  **account}}


@pytest.mark.parametrize("account", [
    {"indexable": False}, {"noindex": True}, {"discoverable": False},
    {"note": "<p>Hallo #NoIndex</p>"}, {"note": "bitte #noai"}, {"note": "#nobots"}, {"note": "#NoSearch"},
    {"note": "#noarchive danke"}, {"fields": [{"name": "Crawler", "value": "#nobot"}]},
    {"fields": [{"name": "#NoAI", "value": "gilt für alle Posts"}]},
])
def test_opt_out_signals(account):
    assert opted_out({"indexable": True, **account})


def test_missing_indexable_is_no_consent_unless_accepted():
    old_server = {"note": "#nobotanik-Fan", "discoverable": None}  # no `indexable`: Mastodon < 4.2, Pleroma
    assert opted_out(old_server)
    assert not opted_out(old_server, accept_missing_indexable=True)
    assert not opted_out({"indexable": True, "note": "#nobotanik-Fan #noaiolos"})


def test_drop_reasons_in_order():
    text = "Wir sind queer und feiern heute gemeinsam ein großes Fest im Park."
    assert drop_reason(_status(), text, MATCHER) is None  # a content warning is kept
    for visibility in ("unlisted", "private", "direct", None):
        assert drop_reason(_status(visibility=visibility), text, MATCHER) == "not_public"
    assert drop_reason(_status(bot=True, indexable=False), text, MATCHER) == "opted_out"
    assert drop_reason(_status(tags=("noai",)), text, MATCHER) == "opted_out"  # one post opted out
    assert drop_reason(_status(bot=True), text, MATCHER) == "bot"
    assert drop_reason(_status(tags=("NSFW",)), text, MATCHER) == "nsfw"
    assert drop_reason(_status(), "Dies ist eine automatische Nachricht über queere Themen.", MATCHER) == "automated"
    assert drop_reason(_status(), "Wir feiern heute gemeinsam ein großes Fest im Park.", MATCHER) == "no_keyword"
    assert drop_reason(_status(), "", MATCHER) == "empty"


def test_cleaning_replaces_personal_data_and_keeps_times_and_unicode_emoji():
    html = "<p>Treffen um 10:30:00 :party_parrot: 🎉 für <a href='https://x.example'>https://x.example</a> " \
           "alle @carla@c.example, mail@example.org und carla@c.example, Tel. 0171 2345678</p>" \
           "<p>#Queer #foo #LGBTQIA</p><p>#foo #bar</p>"
    assert clean_html(html, MATCHER).text == ("Treffen um 10:30:00 🎉 für alle <user>, <email> und <email>, "
                                              "Tel. <phone>\n\n#Queer #LGBTQIA")


def test_settings_helpers_and_refusals(tmp_path):
    assert normalise_instance("Chaos.Social/") == "https://chaos.social"
    assert normalise_instance("http://127.0.0.1:8080") == "http://127.0.0.1:8080"
    tags = default_tags()
    assert {"transmann", "nichtbinär", "queer", "lesbisch"} <= set(tags) and len(tags) == len(set(tags))
    with pytest.raises(QueerbiasError, match="has no contact"):
        CrawlSettings(out_dir=tmp_path, user_agent="queerbias-crawler/0.1 (<your e-mail>)")
    with pytest.raises(QueerbiasError, match="needs a contact"):
        build_user_agent("queerbias-crawler", None, None)
    assert "contact: me@uni.example" in build_user_agent("queerbias-crawler", "me@uni.example", None)
    with pytest.raises(QueerbiasError, match="over plain http"):
        CrawlSettings(out_dir=tmp_path, user_agent=UA, token="t", token_instance="http://social.example")
    CrawlSettings(out_dir=tmp_path, user_agent=UA, token="t", token_instance="http://127.0.0.1:8080")


def test_retry_after_in_seconds_or_as_a_date():
    now = datetime(2024, 5, 1, 12, tzinfo=timezone.utc).timestamp()
    assert retry_after_seconds("600", now) == 600
    assert retry_after_seconds(format_datetime(datetime(2024, 5, 1, 12, 10, tzinfo=timezone.utc), usegmt=True),
                               now) == 600
    assert retry_after_seconds("soon", now) is None and retry_after_seconds(None, now) is None


def test_error_descriptions_hold_a_status_and_a_short_scrubbed_reason_only():
    html = "<html>\n" + "<p>spam anna@example.org</p>\n" * 20_000
    error = Exception(f"Could not parse response as JSON, response code was 200, bad json content was {html!r}.",
                      "Exception was: Expecting value")
    assert describe_error(error) == "Exception: the answer is not JSON"
    hostile = MastodonAPIError("Mastodon API returned error", 500, "Fehler bei Anna Müller, anna@example.org, "
                               "+49 170 1234567 " + "x" * 500, "ruf an: 0171 2345678")
    text = describe_error(hostile)
    assert text.startswith("MastodonAPIError 500: Fehler bei Anna Müller, <email>, <phone>") and len(text) < 110
    assert "\n" not in text and "1234567" not in text
    assert quote("a\n  b") == "a b"


def test_instance_etiquette_helpers():
    assert rule_against_ai(["Keine Diskriminierung.", "Kein Scraping und kein KI-Training mit unseren Posts."])
    assert rule_against_ai(["No AI training on our content."])
    assert rule_against_ai(["Crawlen verboten"])
    assert rule_against_ai(["Keine Diskriminierung.", "Sei nett, auch zu Kiel und Aida."]) is None
    deny = frozenset({"bad.example"})
    assert is_denied("bad.example", deny) and is_denied("sub.bad.example:443", deny)
    assert not is_denied("notbad.example", deny)
