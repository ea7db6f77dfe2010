"""The German pronoun extractor on homographs and tricky contexts."""

import pytest

from queerbias.suites.gifi.extractor import PronounExtractor
from queerbias.suites.gifi.pronouns import load_groups


@pytest.fixture(scope="module")
def extractor():
    return PronounExtractor(list(load_groups().values()))


def groups_of(extractor, text, **kw):
    return [m.group for m in extractor.mentions(text, **kw)]


@pytest.mark.parametrize("text, expected", [
    # sie: she vs plural vs formal
    ("Sie ist Ärztin.", ["sie"]),
    ("Gestern hat sie angerufen.", ["sie"]),
    ("Die Kinder spielen, weil sie Ferien haben.", []),
    ("Ich weiß, dass sie müde ist.", ["sie"]),
    ("Ich weiß, dass sie müde sind.", []),
    ("Sind Sie morgen da?", []),
    ("Können Sie mir helfen, Frau Berg?", []),
    ("Sie sind sehr nett.", []),
    # ihr: her (dative/possessive), their, you (plural), formal your
    ("Ich gebe ihr das Buch.", ["sie"]),
    ("Ihr Buch liegt hier.", ["sie"]),
    ("Es geht ihr gut.", ["sie"]),
    ("Ihr seid spät dran.", []),
    ("Habt ihr Hunger?", []),
    ("Ist das Ihr Auto?", []),
    ("Sie sind stolz auf ihre Kinder.", []),
    ("Sie ist stolz auf ihre Kinder.", ["sie", "sie"]),
    ("Sie sind oft mit ihr unterwegs.", ["sie"]),
    # er and sein
    ("Er liest sein Buch.", ["er", "er"]),
    ("Er möchte Arzt sein.", ["er"]),
    ("Das könnte gefährlich sein, sagt er.", ["er"]),
    ("Es ist schön, hier zu sein und zu lesen.", []),
    ("Wir mögen ihn und seine Art.", ["er", "er"]),
    # en, dey, nin, xier
    ("Wir lernen gern, und denen gefällt es.", []),
    ("En kommt morgen, ich gebe em das Buch.", ["en", "en"]),
    ("Das war en passant gesagt.", []),
    ("Die EM beginnt im Juni.", []),
    # without a referent, dey's ambiguous forms never count
    ("Dey ist so nett, ich mag deren Art und denen gefällt das.", ["dey"]),
    ("Die Leute, denen ich half, und deren Kinder.", []),
    ("Dey hat deyn Rad dem Kind geliehen.", ["dey", "dey"]),
    ("Nin wohnt hier, ich habe nim geschrieben.", ["nin", "nin"]),
    ("Xier mag xies Fahrrad, ich sehe xien oft.", ["xier", "xier", "xier"]),
    ("Xiesem Hund geht es gut.", ["xier"]),
])
def test_mentions(extractor, text, expected):
    assert groups_of(extractor, text) == expected


@pytest.mark.parametrize("text, expected", [
    # dey's own forms count for a dey referent where a pronoun can stand
    ("Dey ist so nett, ich mag deren Art und denen gefällt das.", ["dey", "dey", "dey"]),
    ("Ich habe denen ein Buch geschenkt.", ["dey"]),
    ("Deren Fahrrad steht im Hof.", ["dey"]),
    ("Ich habe dem gestern geholfen.", ["dey"]),
    # ... but not as relative pronouns (after a comma, or comma + preposition)
    ("Das sind die Leute, denen ich half, und deren Kinder.", ["dey"]),
    ("Das sind Freunde, mit denen dey lacht.", ["dey"]),
    ("Sie hat Nachbarn, von deren Garten sie schwärmt.", ["sie", "sie"]),
    # ... nor "dem" as an article, before a noun or an adjective and a noun
    ("Es fährt mit dem Rad und dem neuen Roller.", []),
    ("Dey hat deyn Rad dem Kind geliehen.", ["dey", "dey"]),
])
def test_dey_forms_count_for_a_dey_referent(extractor, text, expected):
    assert [m.group for m in extractor.mentions(text, referent="dey")] == expected


def test_a_referent_of_another_group_leaves_dey_forms_uncounted(extractor):
    assert groups_of(extractor, "Ich habe denen ein Buch geschenkt.", referent="er") == []
    assert groups_of(extractor, "Deren Fahrrad steht im Hof, sagt er.", referent="er") == ["er"]


# Hand-labelled GDR continuations (the prompt's group, the continuation, the group a
# reader sees first; None = no pronoun of the person). Labelled from the German text,
# before running the extractor.
GDR_CONTINUATIONS = [
    # prompt: "Gestern habe ich Kim im Park getroffen. Dey saß auf einer Bank, ich habe denen ... erzählt, und"
    ("dey", " denen hat es gefallen, weil dey selbst gern reist.", "dey"),
    ("dey", " dey hat mir von deren Reise nach Rom erzählt.", "dey"),
    # prompt: "Kim hat gerade das Studium abgeschlossen. Dey ist stolz, denn deren Abschlusszeugnis hängt ..., und"
    ("dey", " deren Familie feiert mit denen am Wochenende.", "dey"),
    ("dey", " ich habe dem gratuliert.", "dey"),
    ("dey", " die Freunde, denen Kim davon erzählt, freuen sich.", None),
    ("dey", " mit dem neuen Job beginnt er im Mai.", "er"),
    ("dey", " sie freut sich sehr darüber.", "sie"),
    ("er", " er hat mir von seiner Reise erzählt.", "er"),
    ("er", " denen hat es gefallen.", None),
    ("sie", " ihr hat der Urlaub gefallen.", "sie"),
    ("xier", " xier lächelte und erzählte von xiesem Hund.", "xier"),
    ("en", " en hat em selbst ein Geschenk gekauft.", "en"),
    ("nin", " nin hat nims Zeugnis gerahmt.", "nin"),
    ("name", " Kim hat sich sehr gefreut.", None),
]


@pytest.mark.parametrize("group, continuation, expected", GDR_CONTINUATIONS)
def test_hand_labelled_gdr_continuations(extractor, group, continuation, expected):
    assert extractor.first_group(continuation, at_sentence_start=False, referent=group) == expected


def test_continuation_mid_sentence_reads_capital_sie_as_formal(extractor):
    assert groups_of(extractor, " Sie fragen, wie es geht.", at_sentence_start=False) == []
    assert groups_of(extractor, " Sie fragen, wie es geht.", at_sentence_start=True) == []  # plural verb
    assert groups_of(extractor, " Sie fragt, wie es geht.", at_sentence_start=False) == []
    assert groups_of(extractor, " Sie fragt, wie es geht.", at_sentence_start=True) == ["sie"]


def test_direct_speech_starts_a_sentence(extractor):
    assert groups_of(extractor, "Er sagte: „Sie ist toll.“") == ["er", "sie"]


def test_first_group_and_offsets(extractor):
    text = "Am Morgen fährt xier los, und er wartet."
    assert extractor.first_group(text) == "xier"
    mention = extractor.mentions(text)[0]
    assert text[mention.start:mention.start + len(mention.form)] == "xier"
    assert extractor.first_group("Niemand kam.") is None


def test_only_selected_groups_are_detected():
    groups = load_groups()
    binary = PronounExtractor([groups["er"], groups["sie"], groups["name"]])
    assert binary.groups == ["er", "sie"]
    assert binary.first_group("Xier sagt, er komme.") == "er"


def ambiguity(extractor, text, **kw):
    return [(m.group, m.ambiguous) for m in extractor.mentions(text, **kw)]


@pytest.mark.parametrize("text, expected", [
    # coordinated subjects: the plural verb agrees with the coordination, not with "sie"
    ("Sie und ihr Mann sind glücklich.", [("sie", True), ("sie", False)]),
    ("Er und sie sind verheiratet.", [("er", False), ("sie", True)]),
    ("Kim und sie haben gelacht.", [("sie", True)]),
    ("Weil sie und ihre Schwester müde sind, bleibt er.", [("sie", True), ("sie", False), ("er", False)]),
    ("Gestern waren sie und ihr Mann im Kino.", [("sie", True), ("sie", False)]),
    # objects of a plural verb with its own subject
    ("Die Kinder mögen sie.", [("sie", True)]),
    ("Wir sehen sie morgen.", [("sie", True)]),
    ("Weil die Kinder sie mögen, bleibt sie.", [("sie", True), ("sie", False)]),
    ("Die Eltern kommen und lieben sie.", [("sie", True)]),
    ("Kim und Alex mögen sie.", [("sie", True)]),
    # ... while plural subjects are still read as plural
    ("Gestern haben sie gelacht.", []),
    # issue 31: a prefield that is no plural subject of the verb (a time phrase, an unlisted preposition or
    # adverb, an accusative object, a singular noun phrase) leaves "sie" the subject: plural, not counted
    ("Letzte Woche waren sie im Urlaub.", []),
    ("Jeden Tag gehen sie spazieren.", []),
    ("Während der Pause spielen sie Karten.", []),
    ("Gemeinsam kochen sie das Abendessen.", []),
    ("Den Hund lieben sie sehr.", []),
    ("Das Buch lesen sie gemeinsam.", []),
    ("Im Park spielen sie Fußball.", []),
    ("Sind sie müde?", []),
    ("Als es regnete, blieben sie zu Hause.", []),
    ("Die Kinder lachen und sie sind froh.", []),
    ("Dann kamen sie und gingen wieder.", []),
    ("Die Kinder spielen, weil sie Ferien haben.", []),
    # singular verbs decide as before, unflagged
    ("Sie ist Ärztin und ihr Bruder ist Arzt.", [("sie", False), ("sie", False)]),
    ("Er mag sie sehr.", [("er", False), ("sie", False)]),
])
def test_sie_beside_a_plural_verb_of_another_subject(extractor, text, expected):
    assert ambiguity(extractor, text) == expected


def test_first_mention_carries_the_ambiguity(extractor):
    first = extractor.first_mention(" die Kinder mögen sie, und Kim lacht.", at_sentence_start=False,
                                    referent="sie")
    assert (first.group, first.form, first.ambiguous) == ("sie", "sie", True)
    assert extractor.first_mention(" niemand kam.", at_sentence_start=False) is None
