"""CDA: the German counterfactual lexicon on real phrases, round trips, counts, word boundaries."""

from __future__ import annotations

import json

import pytest

from queerbias.errors import QueerbiasError
from queerbias.text.counterfactual import Lexicon, attributive_ending
from queerbias.train.corpus import select_identities
from queerbias.train.objectives.cda.corpus import augment

from .helpers import DEMO_CORPUS


@pytest.fixture(scope="module")
def lexicon() -> Lexicon:
    return Lexicon.load()


def entry_lexicon(lexicon: Lexicon, kind: str, word: str) -> Lexicon:
    """A lexicon of the one entry whose source is this kind and word (its inverse restores)."""
    entries = [e for e in lexicon.entries if e.source.kind == kind and e.source.words[0] == word]
    assert len(entries) == 1, (kind, word)
    return Lexicon(entries, lexicon.nouns, lexicon.version, lexicon.checksum)


# Every case and number of an inflected adjective, written out as German uses it:
# (phrase with the stem at {}, its declension / case / number).
ADJECTIVE_PHRASES = [
    ("Ein {}er Mann kommt.", "mixed nom sg m"),
    ("Sie sieht einen {}en Mann.", "mixed acc sg m"),
    ("Sie spricht mit einem {}en Mann.", "mixed dat sg m"),
    ("Das Rad eines {}en Mannes.", "mixed gen sg m"),
    ("Der {}e Mann lacht.", "weak nom sg m"),
    ("Das {}e Paar tanzt.", "weak nom sg n"),
    ("Ein {}es Paar tanzt.", "mixed nom sg n"),
    ("Eine {}e Frau singt.", "mixed nom sg f"),
    ("Mit der {}en Frau.", "weak dat sg f"),
    ("{}e Menschen lesen.", "strong nom pl"),
    ("Mit {}en Menschen.", "strong dat pl"),
    ("Die Rechte {}er Menschen.", "strong gen pl"),
    ("Die {}en Menschen lesen.", "weak nom pl"),
    ("Kim ist {}.", "predicative"),
    ("Viele {}e leben hier.", "nominalised plural"),
]
ADJECTIVE_ENTRIES = [("schwul", "heterosexuell"), ("lesbisch", "heterosexuell"),
                     ("bisexuell", "heterosexuell"), ("pansexuell", "heterosexuell"),
                     ("asexuell", "heterosexuell"), ("demisexuell", "heterosexuell"),
                     ("queer", "heterosexuell"), ("transgeschlechtlich", "cisgeschlechtlich"),
                     ("intergeschlechtlich", "endogeschlechtlich")]


def capitalised(template: str, word: str) -> str:
    text = template.format(word)
    return text[0].upper() + text[1:]


@pytest.mark.parametrize("stem,counterfactual", ADJECTIVE_ENTRIES)
def test_adjectives_keep_their_ending_in_every_case_and_number(lexicon, stem, counterfactual):
    one = entry_lexicon(lexicon, "adjective", stem)
    for template, _ in ADJECTIVE_PHRASES:
        phrase = capitalised(template, stem)
        swapped = one.swap(phrase)
        assert swapped.text == capitalised(template, counterfactual), phrase
        assert one.inverse().swap(swapped.text).text == phrase  # swapping back restores it


# (entry kind, entry word, phrase, its swap): German as it is written, every case and number.
ROUND_TRIPS = [
    # inflected adjective -> uninflected counterfactual: the ending goes (and comes back)
    ("adjective", "nichtbinär", "Ein nichtbinärer Mensch kommt.", "Ein cis Mensch kommt."),
    ("adjective", "nichtbinär", "Sie sieht einen nichtbinären Menschen.", "Sie sieht einen cis Menschen."),
    ("adjective", "nichtbinär", "Sie spricht mit einem nichtbinären Menschen.", "Sie spricht mit einem cis Menschen."),
    ("adjective", "nichtbinär", "Die nichtbinäre Person lacht.", "Die cis Person lacht."),
    ("adjective", "nichtbinär", "Mit der nichtbinären Person.", "Mit der cis Person."),
    ("adjective", "nichtbinär", "Nichtbinäre Menschen lesen.", "Cis Menschen lesen."),
    ("adjective", "nichtbinär", "Mit nichtbinären Menschen.", "Mit cis Menschen."),
    ("adjective", "nichtbinär", "Die nichtbinären Menschen lesen.", "Die cis Menschen lesen."),
    ("adjective", "nichtbinär", "Kim ist nichtbinär.", "Kim ist cis."),
    ("adjective", "nichtbinär", "Kim ist nicht-binär.", "Kim ist cis."),
    # uninflected -> inflected: the ending follows determiner, case, gender and number
    ("invariant", "inter", "Ein inter Mensch kommt.", "Ein endogeschlechtlicher Mensch kommt."),
    ("invariant", "inter", "Sie sieht einen inter Menschen.", "Sie sieht einen endogeschlechtlichen Menschen."),
    ("invariant", "inter", "Sie spricht mit einem inter Menschen.", "Sie spricht mit einem endogeschlechtlichen Menschen."),
    ("invariant", "inter", "Der inter Mensch lacht.", "Der endogeschlechtliche Mensch lacht."),
    ("invariant", "inter", "Eine inter Person singt.", "Eine endogeschlechtliche Person singt."),
    ("invariant", "inter", "Mit einer inter Person.", "Mit einer endogeschlechtlichen Person."),
    ("invariant", "inter", "Die inter Person singt.", "Die endogeschlechtliche Person singt."),
    ("invariant", "inter", "Mit der inter Person.", "Mit der endogeschlechtlichen Person."),
    ("invariant", "inter", "Ein inter Kind spielt.", "Ein endogeschlechtliches Kind spielt."),
    ("invariant", "inter", "Mit dem inter Kind.", "Mit dem endogeschlechtlichen Kind."),
    ("invariant", "inter", "Das inter Kind spielt.", "Das endogeschlechtliche Kind spielt."),
    ("invariant", "inter", "Inter Personen lesen.", "Endogeschlechtliche Personen lesen."),
    ("invariant", "inter", "Die inter Personen lesen.", "Die endogeschlechtlichen Personen lesen."),
    ("invariant", "inter", "Mit inter Personen.", "Mit endogeschlechtlichen Personen."),
    ("invariant", "inter", "Mit vielen inter Personen.", "Mit vielen endogeschlechtlichen Personen."),
    ("invariant", "inter", "Die Rechte vieler inter Personen.", "Die Rechte vieler endogeschlechtlicher Personen."),
    ("invariant", "inter", "Für inter Personen.", "Für endogeschlechtliche Personen."),
    ("invariant", "inter", "Alex ist inter.", "Alex ist endogeschlechtlich."),
    # a noun -> adjective + noun, in every case and number
    ("noun", "Lesbe", "Die Lesbe lacht.", "Die heterosexuelle Frau lacht."),
    ("noun", "Lesbe", "Sie sieht die Lesbe.", "Sie sieht die heterosexuelle Frau."),
    ("noun", "Lesbe", "Eine Lesbe lacht.", "Eine heterosexuelle Frau lacht."),
    ("noun", "Lesbe", "Mit der Lesbe.", "Mit der heterosexuellen Frau."),
    ("noun", "Lesbe", "Mit einer Lesbe.", "Mit einer heterosexuellen Frau."),
    ("noun", "Lesbe", "Das Rad einer Lesbe.", "Das Rad einer heterosexuellen Frau."),
    ("noun", "Lesbe", "Lesben lachen.", "Heterosexuelle Frauen lachen."),
    ("noun", "Lesbe", "Sie sieht Lesben.", "Sie sieht heterosexuelle Frauen."),
    ("noun", "Lesbe", "Die Lesben lachen.", "Die heterosexuellen Frauen lachen."),
    ("noun", "Lesbe", "Keine Lesben lachen.", "Keine heterosexuellen Frauen lachen."),
    ("noun", "Lesbe", "Viele Lesben lachen.", "Viele heterosexuelle Frauen lachen."),
    ("noun", "Lesbe", "Mit Lesben.", "Mit heterosexuellen Frauen."),
    ("noun", "Lesbe", "Mit den Lesben.", "Mit den heterosexuellen Frauen."),
    ("noun", "Lesbe", "Die Rechte der Lesben.", "Die Rechte der heterosexuellen Frauen."),
    ("noun", "Lesbe", "Die Rechte vieler Lesben.", "Die Rechte vieler heterosexueller Frauen."),
    ("noun", "Lesbe", "Die jungen Lesben lachen.", "Die jungen heterosexuellen Frauen lachen."),
    ("noun", "Lesbe", "Junge Lesben lachen.", "Junge heterosexuelle Frauen lachen."),
    # uninflected -> uninflected
    ("invariant", "trans", "Ich finde, trans Frauen sind stark.", "Ich finde, cis Frauen sind stark."),
    ("invariant", "trans", "Trans Männer lachen.", "Cis Männer lachen."),
    ("invariant", "trans", "Eine trans Frau und ein trans Mann.", "Eine cis Frau und ein cis Mann."),
    ("invariant", "trans", "Robin ist trans.", "Robin ist cis."),
    ("invariant", "agender", "Agender Menschen lesen, Kim ist agender.", "Cis Menschen lesen, Kim ist cis."),
    ("invariant", "transgender", "Ein transgender Mensch.", "Ein cisgender Mensch."),
]


@pytest.mark.parametrize("kind,word,phrase,expected", ROUND_TRIPS)
def test_swap_inflects_and_swapping_back_restores(lexicon, kind, word, phrase, expected):
    one = entry_lexicon(lexicon, kind, word)
    assert one.swap(phrase).text == expected
    if "nicht-binär" not in phrase:  # the inverse writes the lexicon's first spelling
        assert one.inverse().swap(expected).text == phrase


def test_nominalised_adjective_without_an_uninflected_twin_is_skipped(lexicon):
    swap = lexicon.swap("Viele Nichtbinäre leben hier.")
    assert swap.text == "Viele Nichtbinäre leben hier."
    assert swap.skipped == {"nonbinary": 1} and not swap.swapped


def test_compounds_keep_their_second_part(lexicon):
    swap = lexicon.swap("Transfrauen, ein Transmann, Trans-Männer und eine Transperson.")
    assert swap.text == "Cisfrauen, ein Cismann, Cis-Männer und eine Cisperson."
    assert swap.swapped == {"trans_women": 1, "trans_men": 2, "transgender": 1}


def test_counts_per_group(lexicon):
    text = ("Schwule Männer und lesbische Frauen, trans Frauen, ein trans Mann, trans Menschen; "
            "Kim ist nichtbinär. Inter Mailand spielt.")
    swap = lexicon.swap(text)
    assert swap.swapped == {"gay": 1, "lesbian": 1, "trans_women": 1, "trans_men": 1,
                            "transgender": 1, "nonbinary": 1}
    assert swap.skipped == {"intersex": 1}  # "Inter Mailand": no known noun, left alone
    assert "Inter Mailand" in swap.text


def test_words_that_merely_contain_a_term_are_left_alone(lexicon):
    text = ("Der Transport kostet. Das Interesse wächst. Die Queerness, das Internet, "
            "der Schwulst, die Transparenz, ein Interview und intern.")
    swap = lexicon.swap(text)
    assert swap.text == text and not swap.swapped and not swap.skipped
    assert not lexicon.mentions(text)


def test_attributive_endings_follow_the_declension_tables():
    assert attributive_ending([], ("m",)) == "er"             # strong nom
    assert attributive_ending(["mit"], ("m",)) == "em"        # strong dat
    assert attributive_ending(["der"], ("m",)) == "e"         # weak nom
    assert attributive_ending(["der"], ("f",)) == "en"        # weak dat/gen
    assert attributive_ending(["ein"], ("n",)) == "es"        # mixed nom/acc
    assert attributive_ending(["zum"], ("n",)) == "en"        # contraction: weak dat
    assert attributive_ending(["das"], ("pl",)) is None       # no reading fits


def test_augment_two_sided_and_one_sided():
    texts = ["Ein schwules Paar feiert.", "Das Wetter ist schön.", "Trans Frauen und Lesben lachen."]
    lexicon = Lexicon.load()
    two, counts = augment(texts, lexicon, two_sided=True)
    assert two == [texts[0], "Ein heterosexuelles Paar feiert.", texts[1], texts[2],
                   "Cis Frauen und heterosexuelle Frauen lachen."]
    assert counts["swapped_documents"] == 2
    assert counts["documents_per_group"] == {"gay": 1, "lesbian": 1, "trans_women": 1}
    assert counts["terms_per_group"] == {"gay": 1, "lesbian": 1, "trans_women": 1}
    one, _ = augment(texts, lexicon, two_sided=False)
    assert one == [two[1], texts[1], two[4]]


def test_targeted_selection_includes_finer_groups():
    texts = [json.loads(line)["text"] for line in (DEMO_CORPUS / "train.jsonl").read_text().splitlines()]
    lexicon = Lexicon.load()
    kept = select_identities(texts, lexicon, ["transgender"])
    assert kept and all(lexicon.mentions(t) & {"transgender", "trans_women", "trans_men"} for t in kept)
    assert len(kept) < len(texts)


@pytest.mark.parametrize("entry,message", [
    ({"group": "gay", "from": {"adjective": "schwul"}}, "needs group, from and to"),
    ({"group": "nope", "from": {"adjective": "a"}, "to": {"adjective": "b"}}, "unknown group"),
    ({"group": "gay", "from": {"adjective": "a", "invariant": "b"}, "to": {"adjective": "b"}},
     "exactly one of"),
    ({"group": "gay", "from": {"noun": ["Lesbe"], "gender": "f"}, "to": {"noun": ["Frau", "Frauen"],
                                                                        "gender": "f"}}, "singular, plural"),
    ({"group": "gay", "from": {"adjective": "a"}, "to": {"noun": ["Frau", "Frauen"], "gender": "f"}},
     "cannot map"),
])
def test_a_lexicon_entry_that_does_not_parse_is_named(tmp_path, entry, message):
    path = tmp_path / "lexicon.yaml"
    path.write_text(json.dumps({"entries": [entry]}), encoding="utf-8")
    with pytest.raises(QueerbiasError, match=f"{path}: entry 1 .*{message}"):
        Lexicon.load(path)
