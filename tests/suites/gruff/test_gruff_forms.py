"""German forms: hand-checked articles, nouns and pronouns in all four systems and cases."""

from __future__ import annotations

import pytest

from queerbias.errors import QueerbiasError
from queerbias.suites.gruff.forms import (
    CASES,
    PRONOUN_SETS,
    SYSTEMS,
    known_nouns,
    options,
    pairing,
    pronoun,
    referent,
)
from queerbias.suites.gruff.generation import instance, strata

# hand-checked against Duden (er, sie), geschlechtsneutral.net (en) and annaheger.de (xier)
PRONOUNS = {
    "er": ("er", "ihn", "ihm", "seine"),
    "sie": ("sie", "sie", "ihr", "ihre"),
    "en": ("en", "en", "em", "ense"),
    "xier": ("xier", "xien", "xiem", "xiese"),
}
PHRASES = {
    "Tierarzt": ("der Tierarzt", "die Tierärztin", "de Tierarzte", "dier Tierarzt*in"),
    "Lehrer": ("der Lehrer", "die Lehrerin", "de Lehrere", "dier Lehrer*in"),
    "Direktor": ("der Direktor", "die Direktorin", "de Direktore", "dier Direktor*in"),
    "Anwalt": ("der Anwalt", "die Anwältin", "de Anwalte", "dier Anwalt*in"),
    "Pathologe": ("der Pathologe", "die Pathologin", "de Pathologere", "dier Patholog*in"),
    "Kunde": ("der Kunde", "die Kundin", "de Kundere", "dier Kund*in"),
    "Zeuge": ("der Zeuge", "die Zeugin", "de Zeugere", "dier Zeug*in"),
    "Angestellter": ("der Angestellte", "die Angestellte", "de Angestellte", "dier Angestellte"),
    "Verstorbener": ("der Verstorbene", "die Verstorbene", "de Verstorbene", "dier Verstorbene"),
}
# nouns whose forms do not follow masculine + in / + e / + *in (umlaut, -e stems, adjectives)
IRREGULAR = {"Anwalt", "Arzt", "Tierarzt", "Pathologe", "Psychologe", "Rechtsanwaltsgehilfe", "Kunde", "Zeuge",
             "Angestellter", "Auszubildender", "Heranwachsender", "Schaulustiger", "Verstorbener", "Verunglückter"}


def test_order_of_systems_cases_and_sets():
    assert SYSTEMS == ("masculine", "feminine", "de_e", "sternchen")
    assert CASES == ("nom", "acc", "dat", "poss")
    assert PRONOUN_SETS == ("er", "sie", "en", "xier")


@pytest.mark.parametrize("pronoun_set", PRONOUNS)
def test_pronoun_forms_in_every_case(pronoun_set):
    assert tuple(pronoun(pronoun_set, case) for case in CASES) == PRONOUNS[pronoun_set]


def test_options_of_a_case_are_one_form_per_set():
    assert options("dat") == ("ihm", "ihr", "em", "xiem")
    assert options("poss") == ("seine", "ihre", "ense", "xiese")


@pytest.mark.parametrize("lemma", PHRASES)
def test_noun_phrases_in_all_four_systems(lemma):
    assert tuple(referent(lemma, system).phrase for system in SYSTEMS) == PHRASES[lemma]


def test_regular_nouns_follow_the_system_rules():
    for table in known_nouns().values():
        for lemma, forms in table.items():
            if lemma in IRREGULAR:
                continue
            assert forms == [lemma, lemma + "in", lemma + "e", lemma + "*in"], lemma
    assert len(known_nouns()["occupations"]) == 60
    assert len(known_nouns()["participants"]) == 25


def test_pairings_are_bijective_and_swapped_exchanges_neopronouns():
    default, swapped = pairing("default"), pairing("swapped")
    assert sorted(default.values()) == sorted(PRONOUN_SETS) == sorted(swapped.values())
    assert default == {"masculine": "er", "feminine": "sie", "de_e": "en", "sternchen": "xier"}
    assert swapped == {**default, "de_e": "xier", "sternchen": "en"}
    with pytest.raises(QueerbiasError):
        pairing("other")


def test_unknown_noun_is_a_user_error():
    with pytest.raises(QueerbiasError, match="nouns.yaml"):
        referent("Astronaut", "masculine")


def test_every_noun_of_the_published_templates_has_forms(shared_templates):
    for task in shared_templates.tasks:
        for lemma in (task.occupation, task.participant):
            assert all(referent(lemma, system).noun for system in SYSTEMS)


def _first(templates, setting, system, case, distractor=None):
    for stratum in strata(templates, setting):
        if (stratum.occupation, stratum.system, stratum.case, stratum.distractor_system) == (
                "Tierarzt", system, case, distractor):
            return instance(stratum, 0, setting)
    raise AssertionError("no such stratum")


def test_full_sentences_hand_checked(tiny_templates):
    item = _first(tiny_templates, "none", "sternchen", "poss")
    assert item.texts()[item.gold] == "Dier Tierarzt*in räumte xiese Praxis auf."
    assert item.texts()[0] == "Dier Tierarzt*in räumte seine Praxis auf."
    item = _first(tiny_templates, "d2", "de_e", "nom", distractor="feminine")
    assert item.target == "en" and item.distractor == "sie"
    assert item.texts()[item.gold] == (
        "De Tierarzte sagte, dass en müde war. "
        "Die Besitzerin sagte, dass sie nicht hungrig war. "
        "Sie war nicht müde. "
        "De Tierarzte sagte, dass en den Hund impfen werde.")
