"""The identity taxonomy: every set's labels land on the intended canonical group."""

from __future__ import annotations

import csv

import pytest

from queerbias.text.taxonomy import (
    GROUPS,
    canonical_group,
    counterfactual_groups,
    display_name,
    umbrella,
)

# Labels as the published sets spell them (WinoQueer final Gender_ID_x/_y, v0
# bias_type with its leading space, German survey tables) and ours.
KNOWN_LABELS = {
    "LGBTQ": "lgbtq",
    "Queer": "queer",
    "Transgender": "transgender",
    "NB": "nonbinary",
    "Bisexual": "bisexual",
    "Pansexual": "pansexual",
    "Lesbian": "lesbian",
    "Asexual": "asexual",
    "Gay": "gay",
    "Straight": "straight",
    "Heterosexual": "straight",
    "Cisgender": "cis",
    "Cis": "cis",
    " masc_femm_name": "binary_gender",
    " masc_trans_pronoun": "transgender",
    "cis_gay_pairwise_fm": "gay",
    "cis_les_pairwise_mf": "lesbian",
    "Non-binary": "nonbinary",
    "Trans": "transgender",
    "Demisexual": "demisexual",
    "Genderfluid": "genderfluid",
    "Polyamorous": "polyamorous",
    "schwule Männer": "gay",
    "Nicht-binäre Menschen": "nonbinary",
    "trans Frauen": "trans_women",
    "LGBTQ-Personen": "lgbtq",
    "heterosexuelle Männer": "straight_men",
}


@pytest.mark.parametrize(("label", "group"), KNOWN_LABELS.items())
def test_known_labels_are_canonical(label, group):
    assert canonical_group(label) == group


def test_matching_ignores_case_whitespace_and_hyphens():
    assert canonical_group("  nicht binär ") == canonical_group("NICHT_BINÄR") == "nonbinary"


def test_unknown_labels_pass_through_normalised_and_unmerged():
    assert canonical_group("  Two Spirit ") == "two_spirit"
    assert canonical_group("Aromantic") == "aromantic"


def test_display_names_in_both_languages():
    assert display_name("Gay", "en") == "gay men"
    assert display_name("NB", "de") == "nicht-binäre Menschen"
    assert display_name("Two Spirit", "de") == "two_spirit"
    with pytest.raises(ValueError):
        display_name("gay", "fr")


def test_counterfactual_side_is_straight_and_cis_only():
    assert {"straight", "cis", "straight_men", "cis_women"} <= set(counterfactual_groups)
    assert not {"gay", "nonbinary", "binary_gender"} & set(counterfactual_groups)
    assert list(GROUPS)[0] == "lgbtq"


def test_umbrellas_roll_up_subgroups():
    assert umbrella("trans Frauen") == "transgender"
    assert umbrella("Agender") == "nonbinary"
    assert umbrella("heterosexuelle Frauen") == "straight"
    assert umbrella("Gay") == "gay"


def test_every_winoqueer_v0_bias_type_is_known(shared_data):
    with open(shared_data / "winoqueer-v0" / "winoqueer_benchmark.csv", newline="", encoding="utf-8") as f:
        labels = {row["bias_type"] for row in csv.DictReader(f)}
    assert {canonical_group(label) for label in labels} <= set(GROUPS)
