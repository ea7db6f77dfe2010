"""Metrics checked against hand-computed values on a small items table."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy import stats

from queerbias.suites.gruff.metrics import (
    accuracy,
    case_correlations,
    over_resolution,
    pronoun_tests,
    setting_figures,
)


def _items(rows):
    frame = pd.DataFrame(rows, columns=["occupation", "setting", "case", "system", "target", "distractor", "answer"])
    frame["correct"] = frame["answer"] == frame["target"]
    frame["tie"] = False
    return frame


def test_accuracy_and_standard_error():
    result = accuracy([True, True, True, False])
    assert result["n"] == 4 and result["accuracy"] == 75.0
    assert result["se"] == pytest.approx(100 * math.sqrt(0.75 * 0.25 / 4))
    assert accuracy([]) == {"n": 0, "accuracy": None, "se": None}


def test_setting_figures_and_distractor_errors():
    items = _items([
        ("Arzt", "d1", "nom", "masculine", "er", "sie", "er"),
        ("Arzt", "d1", "nom", "de_e", "en", "sie", "sie"),     # error, repeats the distractor
        ("Arzt", "d1", "acc", "de_e", "en", "xier", "er"),     # error, not the distractor
        ("Arzt", "d1", "acc", "sternchen", "xier", "er", "er"),  # error, repeats the distractor
    ])
    figures = setting_figures(items)
    assert figures["accuracy"] == 25.0 and figures["errors"] == 3
    assert figures["distractor_errors"] == pytest.approx(200 / 3)
    assert figures["by_pronoun"]["en"]["accuracy"] == 0.0 and figures["by_pronoun"]["er"]["accuracy"] == 100.0
    assert figures["by_case"]["acc"]["n"] == 2 and figures["by_pronoun"]["sie"]["n"] == 0


def test_over_resolution_rates_and_order():
    items = _items([
        ("Arzt", "d0", "nom", "feminine", "sie", None, "er"),
        ("Arzt", "d0", "nom", "de_e", "en", None, "er"),
        ("Arzt", "d0", "nom", "masculine", "er", None, "er"),
        ("Erzieher", "d0", "nom", "masculine", "er", None, "sie"),
        ("Erzieher", "d0", "nom", "de_e", "en", None, "en"),
    ])
    pulled = over_resolution(items)
    assert [(r["occupation"], r["rate"], r["n"]) for r in pulled["er"]] == [("Arzt", 100.0, 2), ("Erzieher", 0.0, 1)]
    assert pulled["er"][0]["excess"] == 50.0
    assert [(r["occupation"], r["rate"]) for r in pulled["sie"]] == [("Erzieher", 50.0), ("Arzt", 0.0)]


def test_case_correlations_and_pronoun_tests_over_occupations():
    rows = []
    # accuracy per occupation rises with the index in both cases; er beats xier everywhere
    for index, occupation in enumerate(["A", "B", "C", "D", "E", "F"]):
        for case in ("nom", "dat"):
            for k in range(6):
                rows.append((occupation, "d1", case, "masculine", "er", "sie", "er" if k <= index else "sie"))
                rows.append((occupation, "d1", case, "sternchen", "xier", "sie", "xier" if k < index else "sie"))
    items = _items(rows)
    correlations = case_correlations(items)
    assert [(c["a"], c["b"]) for c in correlations] == [("nom", "dat")]
    assert correlations[0]["rho"] == pytest.approx(1.0) and correlations[0]["p_bonferroni"] == correlations[0]["p"]
    tests = {(t["a"], t["b"]): t for t in pronoun_tests(items)}
    assert set(tests) == {("er", "xier")}
    er_xier = tests[("er", "xier")]
    assert er_xier["effect"] == 1.0 and er_xier["p"] == pytest.approx(stats.wilcoxon(
        [100 * (i + 1) / 6 for i in range(6)], [100 * i / 6 for i in range(6)]).pvalue)
