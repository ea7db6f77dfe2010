import pytest

from queerbias.text.keywords import DEFAULT_KEYWORDS, KeywordMatcher, keyword_to_tags

MATCHER = KeywordMatcher()


def test_default_keywords_are_the_seed_studys_17():
    assert len(DEFAULT_KEYWORDS) == 17
    assert {"Trans Mann", "Nicht-binär", "Inter"} <= set(DEFAULT_KEYWORDS)


@pytest.mark.parametrize("text, expected", [
    ("Queere Menschen feiern", ["Queer"]),
    ("die schwulen Männer", ["Schwul"]),
    ("ein lesbischer Kuss", ["Lesbisch"]),
    ("trans* Personen", ["Trans"]),
    ("Trans*Personen und inter*", ["Trans", "Inter"]),
    ("Ich bin trans.", ["Trans"]),
    ("#transmann", ["Trans Mann"]),
    ("trans Frauen sind Frauen", ["Trans", "Trans Frau"]),
    ("nicht-binäre Leute", ["Nicht-binär"]),
    ("Ich bin nichtbinär", ["Nicht-binär"]),
    ("LGBTQIA+ Rechte", ["LGBTQ"]),
    ("LSBTIQ*-Beratung", ["LGBTQ"]),
    ("polyamoröse Beziehung", ["Polyamor"]),
    ("intergeschlechtliche Kinder", ["Inter"]),
    ("QUEER", ["Queer"]),
])
def test_finds_inflected_keywords(text, expected):
    assert MATCHER.find(text) == expected


@pytest.mark.parametrize("text", [
    "Der Transport kommt morgen", "transparent", "Transaktion", "Internet", "International",
    "intern besprochen", "großes Interesse", "Transe",
])
def test_rejects_words_that_merely_contain_a_keyword(text):
    assert MATCHER.find(text) == []


def test_custom_keywords_and_order():
    matcher = KeywordMatcher(["Schwul", "Queer"])
    assert matcher.find("queer und schwul") == ["Schwul", "Queer"]
    assert matcher.keywords == ("Schwul", "Queer")
    with pytest.raises(ValueError):
        KeywordMatcher([" "])


def test_keyword_to_tags_drops_spaces_and_hyphens():
    assert keyword_to_tags("Trans Mann")[0] == "transmann"
    tags = keyword_to_tags("Nicht-binär")
    assert tags[:2] == ["nichtbinär", "nichtbinaer"]
    assert "nonbinary" in tags
    assert keyword_to_tags("Queer") == ["queer"]
    for keyword in DEFAULT_KEYWORDS:
        for tag in keyword_to_tags(keyword):
            assert tag == tag.lower() and " " not in tag and "-" not in tag
