"""Issue 48, done when: grepping every output file of a crawl, a refresh, a takedown and a build of the test server
(and what they print) for the test authors' names, handles and contacts, in every spelling its posts use, finds
nothing.

A fake Mastodon server on 127.0.0.1, the real Mastodon.py client and the real CLI.
"""

from __future__ import annotations

from cli_scenario import crawl_to_corpus
from mastodon_scenario import GERMAN, T0, read_posts

from queerbias.crawl.mastodon.testserver import FakeInstance, FakeMastodonServer, status

# Every spelling of the authors (names, usernames, handles, addresses, phone numbers) no output may hold.
AUTHORS = ("anna", "lena", "schmidt", "ayşe", "ayse", "yılmaz", "yilmaz", "angelo", "alschmidt", "ayse_y",
           "gmx", "chaos . social", "(bei)", "(punkt)", "0170", "123 45 67", "1234567", "（030）", "030／")


def _instance() -> FakeInstance:
    d = "p.example"
    lena = status(10, f"<p>{GERMAN} Liebe Grüße, Anna Lena Schmidt und ANNA-LENA SCHMIDTS Freundin.</p>"
                      "<p>Schreibt an alschmidt (at) gmx . de, alschmidt @ chaos . social oder alschmidt (bei) gmx "
                      "(punkt) de; Tel. 0170—123 45 67, 030／1234567 oder （030） 1234567.</p>"
                      "<p>#queer #AnnaLenaSchmidt</p>",
                  domain=d, created=T0, username="alschmidt", tags=("queer", "annalenaschmidt"))
    lena["account"]["display_name"] = "Anna-Lena Schmidt"
    ayse = status(11, f"<p>{GERMAN} Grüße von AYŞE YILMAZ, auch AYSE YILMAZ, mit D’Angelo.</p>", domain=d,
                  created=T0, username="ayse_y", tags=("queer",))
    ayse["account"]["display_name"] = "Ayşe Yılmaz"
    ayse["mentions"] = [{"id": "9", "username": "dangelo", "acct": "dangelo@m.example", "url": "https://m.example/@dangelo",
                         "display_name": "D'Angelo"}]
    other = status(12, f"<p>Nr. 12: {GERMAN}</p>", domain=d, created=T0, username="bea", tags=("queer",))
    return FakeInstance(d, [lena, ayse, other])


def test_no_output_holds_an_author_in_any_spelling(tmp_path, capsys):
    with FakeMastodonServer(_instance()) as server:
        text = crawl_to_corpus(server, tmp_path, capsys)
    assert {tag for p in read_posts(tmp_path / "crawl") for tag in p["tags"]} == {"queer"}  # the name as a tag went
    for spelling in AUTHORS:
        assert spelling.casefold() not in text, f"{spelling!r} found in the outputs"
