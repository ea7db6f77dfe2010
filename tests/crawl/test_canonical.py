"""The one canonical form of hosts, handles and URLs (`queerbias.crawl.canonical`): every spelling meets, and a
canonical form stays what it is."""

from __future__ import annotations

import pytest

from queerbias.crawl.canonical import canonical_handle, canonical_host, canonical_url


@pytest.mark.parametrize("spelling, canonical", [
    ("B%C3%BCcher.Example.", "xn--bcher-kva.example"),
    ("ｂüｃｈｅｒ。example", "xn--bcher-kva.example"),
    ("straße.example", "xn--strae-oqa.example"),  # IDNA 2008 keeps ß (IDNA 2003 made it "ss")
    ("xn--BCHER-kva.example", "xn--bcher-kva.example"),
])
def test_every_spelling_of_a_host_has_one_canonical_form(spelling, canonical):
    assert canonical_host(spelling) == canonical == canonical_host(canonical)


@pytest.mark.parametrize("spelling, canonical", [
    ("HTTPS://B%C3%BCcher.Example.:443/@AnnaM/1?utm_source=x&a=1#top", "https://xn--bcher-kva.example/@AnnaM/1?a=1"),
    ("https://x.example/@j%C3%B6rg/%7Euser", "https://x.example/@j%C3%B6rg/~user"),
    ("https://x.example/@jörg", "https://x.example/@j%C3%B6rg"),
    ("https://x.example/a%2Fb?fbclid=1", "https://x.example/a%2Fb"),
    ("http://x.example:80", "http://x.example/"),
])
def test_every_spelling_of_a_url_has_one_canonical_form(spelling, canonical):
    assert canonical_url(spelling) == canonical == canonical_url(canonical)


@pytest.mark.parametrize("spelling", ["＠ＡｎｎａＭ＠Ｂüｃｈｅｒ．example", "AnnaM@b%C3%BCcher.example.", "@annam@xn--bcher-kva.example"])
def test_every_spelling_of_a_handle_has_one_canonical_form(spelling):
    assert canonical_handle(spelling) == "annam@xn--bcher-kva.example" == canonical_handle(canonical_handle(spelling))
