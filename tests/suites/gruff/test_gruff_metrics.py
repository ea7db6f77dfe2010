"""Metrics checked against hand-computed values on a small items table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from queerbias.report.paired_stats import wilcoxon_signed_rank
from queerbias.suites.gruff.metrics import (
    accuracy,
    by_setting,
    case_correlations,
    case_tests,
    comparison_extras,
    distinct,
    over_resolution,
    pronoun_case_figures,
    pronoun_spread,
    pronoun_tests,
    replicate_figures,
    setting_figures,
    stereotype_correlation,
    stereotype_scores,
    summarise,
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


def test_distractor_errors_are_a_share_of_the_errors_that_had_a_distractor():
    # Settings without a distractor (d0, no context) leave the column empty (None, or NaN once read back
    # from items.csv): an error there cannot repeat a distractor, so it is no evidence either way.
    items = _items([
        ("Arzt", "d1", "nom", "de_e", "en", "sie", "sie"),   # error, repeats the distractor
        ("Arzt", "d1", "acc", "de_e", "en", "xier", "er"),   # error, not the distractor
        ("Arzt", "d0", "nom", "de_e", "en", None, "sie"),    # error, no distractor
        ("Arzt", "none", "acc", "de_e", "en", float("nan"), "er"),  # error, no distractor
        ("Arzt", "d0", "dat", "masculine", "er", None, "er"),
    ])
    figures = setting_figures(items)
    assert figures["errors"] == 4 and figures["distractor_errors"] == 50.0
    no_distractor = setting_figures(items[items["distractor"].isna()])
    assert no_distractor["errors"] == 2 and no_distractor["distractor_errors"] is None


def test_over_resolution_by_the_papers_definition():
    # Sec. 8: er/sie referents only, settings with an introduction only, per case.
    items = _items([
        # accusative, Arzt: er referents answered sie in 3 of 4 context items -> to_sie 75%
        ("Arzt", "d0", "acc", "masculine", "er", None, "sie"),
        ("Arzt", "d1", "acc", "masculine", "er", "sie", "sie"),
        ("Arzt", "d2", "acc", "masculine", "er", "en", "sie"),
        ("Arzt", "d0", "acc", "masculine", "er", None, "er"),
        # ... sie referents never answered er -> to_er 0%
        ("Arzt", "d0", "acc", "feminine", "sie", None, "sie"),
        ("Arzt", "d1", "acc", "feminine", "sie", "er", "sie"),
        # left out: no introduction, and a neopronoun referent
        ("Arzt", "none", "acc", "masculine", "er", None, "er"),
        ("Arzt", "d0", "acc", "de_e", "en", None, "sie"),
        # nominative, Arzt: to_sie 0 of 2, to_er 1 of 2 -> 50%
        ("Arzt", "d0", "nom", "masculine", "er", None, "er"),
        ("Arzt", "d3", "nom", "masculine", "er", "xier", "er"),
        ("Arzt", "d0", "nom", "feminine", "sie", None, "er"),
        ("Arzt", "d0", "nom", "feminine", "sie", None, "sie"),
    ])
    over = over_resolution(items)
    assert set(over) == {"nom", "acc"}
    (acc,), (nom,) = over["acc"], over["nom"]
    assert (acc["to_sie"], acc["n_er"], acc["to_er"], acc["n_sie"]) == (75.0, 4, 0.0, 2)
    assert acc["score"] == 75.0  # 75 - 0: pulled towards sie
    assert (nom["to_sie"], nom["n_er"], nom["to_er"], nom["n_sie"]) == (0.0, 2, 50.0, 2)
    assert nom["score"] == -50.0  # 0 - 50: pulled towards er


def _stereotype_items(to_sie_by_case: dict[str, list[int]]) -> pd.DataFrame:
    """Per case and occupation: 4 er referents of which k are answered sie, one sie referent answered sie."""
    rows = []
    for case, counts in to_sie_by_case.items():
        for occupation, k in zip("ABCD", counts, strict=True):
            rows += [(occupation, "d1", case, "masculine", "er", "sie", "sie" if j < k else "er") for j in range(4)]
            rows.append((occupation, "d1", case, "feminine", "sie", "er", "sie"))
    return _items(rows)


def test_case_correlations_rank_stereotype_scores():
    # scores (to_sie - to_er, to_er = 0): nom A 0, B 25, C 50, D 75 (ranks 1 2 3 4);
    # acc A 0, B 50, C 25, D 75 (ranks 1 3 2 4): sum d^2 = 2, rho = 1 - 6*2 / (4*15) = 0.8
    items = _stereotype_items({"nom": [0, 1, 2, 3], "acc": [0, 2, 1, 3]})
    (row,) = case_correlations(items)
    assert (row["a"], row["b"], row["n"]) == ("nom", "acc", 4)
    assert row["rho"] == pytest.approx(0.8)
    # four occupations: the one Spearman's p is exact over the 24 pairings (report.paired_stats.spearman):
    # |rho| >= 0.8 for rho = 1, 0.8 (3 adjacent swaps), -0.8 (3) and -1: 8 / 24
    assert row["p"] == pytest.approx(8 / 24)
    assert row["p_bonferroni"] == row["p"]  # one test in the family


def test_stereotype_correlation_between_models():
    a = _stereotype_items({"acc": [0, 1, 2, 3]})
    b = _stereotype_items({"acc": [3, 2, 1, 0]})  # the reverse ranking
    assert stereotype_correlation(a, b)["rho"] == pytest.approx(-1.0)
    assert stereotype_correlation(a, a)["rho"] == pytest.approx(1.0)
    assert stereotype_correlation(a, b, "nom")["rho"] is None  # no nominative items


def test_summary_separates_all_settings_from_the_introduced_pool():
    items = _items([
        ("Arzt", "none", "nom", "masculine", "er", None, "er"),
        ("Arzt", "d0", "nom", "feminine", "sie", None, "er"),
    ])
    summary = summarise(items)
    assert summary["overall"]["accuracy"] == 50.0 and summary["introduced"]["accuracy"] == 0.0
    assert summary["introduced"]["by_pronoun"]["sie"]["n"] == 1


def test_pronoun_tests_over_occupations():
    rows = []
    # er beats xier in every occupation, by one item in six
    for index, occupation in enumerate(["A", "B", "C", "D", "E", "F"]):
        for case in ("nom", "dat"):
            for k in range(6):
                rows.append((occupation, "d1", case, "masculine", "er", "sie", "er" if k <= index else "sie"))
                rows.append((occupation, "d1", case, "sternchen", "xier", "sie", "xier" if k < index else "sie"))
    items = _items(rows)
    tests = {(t["a"], t["b"]): t for t in pronoun_tests(items)}
    assert set(tests) == {("er", "xier")}
    er_xier = tests[("er", "xier")]
    assert er_xier["effect"] == 1.0 and er_xier["p"] == pytest.approx(stats.wilcoxon(
        [100 * (i + 1) / 6 for i in range(6)], [100 * i / 6 for i in range(6)]).pvalue)


def test_model_correlations_cover_every_case():
    # Figs. 8, 12-14: acc the same ranking in both models, nom the reverse, dat and poss absent
    a = _stereotype_items({"acc": [0, 1, 2, 3], "nom": [0, 1, 2, 3]})
    b = _stereotype_items({"acc": [0, 1, 2, 3], "nom": [3, 2, 1, 0]})
    found = comparison_extras(a, b)
    assert list(found) == ["model_correlation", "model_correlation_nom", "model_correlation_dat",
                           "model_correlation_poss", "fidelity_by_pronoun_case"]
    # Fig. 5 of both models: er referents answered sie in 0+1+2+3 of 16 -> 10/16 right; sie always right
    assert found["fidelity_by_pronoun_case"]["before"]["er"]["acc"]["accuracy"] == 62.5
    assert found["fidelity_by_pronoun_case"]["after"]["er"]["nom"]["accuracy"] == 62.5
    assert found["fidelity_by_pronoun_case"]["after"]["sie"]["nom"]["accuracy"] == 100.0
    assert found["model_correlation"]["case"] == "acc" and found["model_correlation"]["rho"] == pytest.approx(1.0)
    assert found["model_correlation_nom"]["rho"] == pytest.approx(-1.0)
    assert found["model_correlation_dat"]["rho"] is None and found["model_correlation_dat"]["n"] == 0


def _fidelity_items():
    """Occupations A-D, er referents, d1: accuracy per case nom 100/50/50/0, acc 50/50/0/0 (two items each)."""
    correct = {"nom": [2, 1, 1, 0], "acc": [1, 1, 0, 0]}
    rows = [(occupation, "d1", case, "masculine", "er", "sie", "er" if j < k else "sie")
            for case, counts in correct.items() for occupation, k in zip("ABCD", counts, strict=True) for j in range(2)]
    return _items(rows)


def test_pronoun_spread_is_mean_and_sd_over_occupations():
    # per occupation over both cases: A 3/4, B 2/4, C 1/4, D 0/4
    spread = pronoun_spread(_fidelity_items(), "er")
    assert spread["n"] == 16 and spread["accuracy"] == 37.5
    assert spread["se"] == pytest.approx(100 * math.sqrt(0.375 * 0.625 / 16))  # kept: the binomial SE
    occupations = [75.0, 50.0, 25.0, 0.0]
    assert spread["occupations"] == pytest.approx({"n": 4, "mean": 37.5, "sd": float(np.std(occupations, ddof=1))})
    assert pronoun_spread(_fidelity_items(), "xier")["occupations"] == {"n": 0, "mean": None, "sd": None}


def test_fig5_and_the_test_between_cases():
    items = _fidelity_items()
    figures = pronoun_case_figures(items)
    assert figures["er"]["nom"]["accuracy"] == 50.0 and figures["er"]["acc"]["accuracy"] == 25.0
    assert figures["sie"]["nom"]["n"] == 0
    tests = case_tests(items)
    assert list(tests) == ["er"]
    (row,) = tests["er"]
    assert (row["a"], row["b"], row["n"], row["mean_a"], row["mean_b"]) == ("nom", "acc", 4, 50.0, 25.0)
    assert row["p"] == pytest.approx(stats.wilcoxon([100, 50, 50, 0], [50, 50, 0, 0]).pvalue)
    assert row["effect"] == 1.0 and row["p_bonferroni"] == row["p"]
    summary = summarise(items)
    assert summary["case_tests"] == tests and summary["introduced"]["by_pronoun_case"] == figures
    assert summary["introduced"]["by_pronoun"]["er"]["occupations"]["mean"] == 37.5


def test_fig6_is_one_ranking_with_two_ends():
    """Sec. 8, Fig. 6 (issue 50): "as this analysis produces a ranking" — one axis, an ihn end and a sie end.
    Each occupation's score (% of er referents answered sie − % of sie referents answered er) is recomputed
    here from the items; the ends are the first and last ten of the one ranking, a tie at the tenth place goes
    to the occupation with more referents, and an occupation with too few referents is not ranked. Friseur,
    over-resolved to both pronouns (50% each way), sat on both sides of two separate top-ten lists."""
    from queerbias.suites.gruff.metrics import MIN_REFERENTS
    from queerbias.suites.gruff.tables import ranking_table

    spec = [(f"S{i}", 12, 12 - i, 0) for i in range(9)]  # (occupation, referents each, er->sie, sie->er)
    spec += [("T-small", 12, 3, 0), ("T-large", 16, 4, 0)]  # both 25.0: tied at the sie end's tenth place
    spec += [(f"H{i}", 12, 0, 12 - i) for i in range(10)] + [("Friseur", 12, 6, 6), ("Rare", 4, 4, 0)]
    rows = []
    for occupation, n, to_sie, to_er in spec:
        rows += [(occupation, "d1", "acc", "masculine", "er", "sie", "sie" if j < to_sie else "er") for j in range(n)]
        rows += [(occupation, "d2", "acc", "feminine", "sie", "er", "er" if j < to_er else "sie") for j in range(n)]
    items = _items(rows)
    by_hand = {}
    for occupation, group in items.groupby("occupation"):
        er, sie = group[group["target"] == "er"], group[group["target"] == "sie"]
        by_hand[occupation] = (100 * (er["answer"] == "sie").mean() - 100 * (sie["answer"] == "er").mean(),
                               len(er) + len(sie), min(len(er), len(sie)) >= MIN_REFERENTS)
    ranked = sorted((o for o, (_, _, enough) in by_hand.items() if enough),
                    key=lambda o: (-by_hand[o][0], -by_hand[o][1], o))
    assert len(ranked) == 22 and by_hand["T-small"][0] == by_hand["T-large"][0] == 25.0
    ends = summarise(items)["ranking_ends"]["acc"]
    assert [r["occupation"] for r in ends["sie"]] == ranked[:10] == [f"S{i}" for i in range(9)] + ["T-large"]
    ihn = sorted(ranked, key=lambda o: (by_hand[o][0], -by_hand[o][1], o))[:10]
    assert [r["occupation"] for r in ends["ihn"]] == ihn == [f"H{i}" for i in range(10)]
    assert [r["score"] for r in ends["sie"]] == pytest.approx([by_hand[o][0] for o in ranked[:10]])
    assert ends["excluded"] == ["Rare"] and ends["min_referents"] == MIN_REFERENTS
    table = ranking_table({"acc": ends})
    cells = [cell for row in table.rows for cell in row[2:]]
    assert not any("Friseur" in cell or "Rare" in cell or "T-small" in cell for cell in cells)
    assert table.rows[0][2].startswith("H0 -100.0") and table.rows[9][3].startswith("T-large +25.0")


def test_the_ends_of_a_short_ranking_share_no_occupation():
    """With fewer than twenty ranked occupations each end takes half of the ranking."""
    from queerbias.suites.gruff.metrics import ranking_ends

    rows = [{"occupation": name, "score": score, "to_er": 0.0, "to_sie": 0.0, "n_er": 12, "n_sie": 12,
             "too_few": False} for name, score in (("A", 10.0), ("B", 0.0), ("C", 0.0), ("D", -5.0), ("E", 0.0))]
    ends = ranking_ends(rows)
    assert [r["occupation"] for r in ends["sie"]] == ["A", "B", "C"] and [r["occupation"] for r in ends["ihn"]] == ["D", "E"]
    # an even count splits evenly; of two equal scores the one with more er and sie referents in all comes first
    # (here the one with fewer er than sie referents: the sum counts, not the difference)
    even = [*rows[:3], {**rows[4], "n_er": 10, "n_sie": 30}]
    ends = ranking_ends(even)
    assert [r["occupation"] for r in ends["sie"]] == ["A", "E"] and [r["occupation"] for r in ends["ihn"]] == ["B", "C"]


def test_an_occupation_with_exactly_the_minimum_of_referents_is_ranked():
    from queerbias.suites.gruff.metrics import MIN_REFERENTS

    rows = []
    for occupation, n in (("Genug", MIN_REFERENTS), ("Knapp", MIN_REFERENTS - 1)):
        rows += [(occupation, "d1", "acc", "masculine", "er", "sie", "sie" if j < 2 else "er") for j in range(n)]
        rows += [(occupation, "d2", "acc", "feminine", "sie", "er", "sie") for j in range(n)]
    found = {r["occupation"]: r["too_few"] for r in over_resolution(_items(rows))["acc"]}
    assert found == {"Genug": False, "Knapp": True}


def test_figures_per_setting_and_ties():
    items = _items([
        ("Arzt", "none", "nom", "masculine", "er", None, "er"),
        ("Arzt", "d1", "nom", "feminine", "sie", "er", "er"),
        ("Arzt", "d1", "acc", "feminine", "sie", "er", "sie"),
    ])
    items.loc[2, "tie"] = True
    settings = by_setting(items)
    assert list(settings) == ["none", "d1"]
    assert (settings["none"]["n"], settings["none"]["accuracy"]) == (1, 100.0)
    assert (settings["d1"]["n"], settings["d1"]["accuracy"], settings["d1"]["ties"]) == (2, 50.0, 1)
    assert setting_figures(items)["ties"] == 1
    summary = summarise(items)
    assert summary["settings"] == settings and summary["over_resolution"] == over_resolution(items)
    assert summary["case_correlations"] == case_correlations(items)
    assert summary["pronoun_tests"] == pronoun_tests(items[items["setting"] != "none"])


def test_over_resolution_rows_without_a_referent_of_one_kind_have_no_score_and_come_last():
    rows = [("Zahnarzt", "d0", "acc", "masculine", "er", None, "er")]  # no sie referent: to_er undefined
    # Arzt: to_sie 50 (1 of 2), to_er 49.5 (99 of 200): +0.5, just sie-ward; Bäcker 0; Koch -50
    rows += [("Arzt", "d0", "acc", "masculine", "er", None, a) for a in ("sie", "er")]
    rows += [("Arzt", "d0", "acc", "feminine", "sie", None, "er" if i < 99 else "sie") for i in range(200)]
    rows += [("Bäcker", "d0", "acc", "masculine", "er", None, "er"), ("Bäcker", "d0", "acc", "feminine", "sie", None, "sie")]
    rows += [("Koch", "d0", "acc", "masculine", "er", None, "er"), ("Koch", "d0", "acc", "feminine", "sie", None, "er"),
             ("Koch", "d0", "acc", "feminine", "sie", None, "sie")]
    table = over_resolution(_items(rows))["acc"]
    assert [(r["occupation"], r["score"]) for r in table] == [
        ("Arzt", pytest.approx(0.5)), ("Bäcker", 0.0), ("Koch", -50.0), ("Zahnarzt", None)]
    assert (table[-1]["to_er"], table[-1]["n_sie"], table[-1]["to_sie"]) == (None, 0, 0.0)
    assert stereotype_scores(_items(rows), "acc").to_dict() == {"Arzt": pytest.approx(0.5), "Bäcker": 0.0,
                                                                "Koch": -50.0}
    pd.testing.assert_series_equal(stereotype_scores(_items(rows), "dat"), pd.Series(dtype=float))


def test_correlations_and_tests_skip_cases_and_pronoun_sets_without_items():
    # nom (the first case) and er (the first pronoun set) have no items: the pairs after them are still tested
    items = _stereotype_items({"acc": [0, 1, 2, 3], "dat": [0, 2, 1, 3]})
    assert [(r["a"], r["b"]) for r in case_correlations(items)] == [("acc", "dat")]
    rows = [(o, "d1", "nom", system, target, "er", target if k < 2 + (target == "sie") * (i + 1) else "er")
            for i, o in enumerate("ABCD") for system, target in (("feminine", "sie"), ("de_e", "en")) for k in range(4)]
    (test,) = pronoun_tests(_items(rows))
    assert (test["a"], test["b"], test["mean_a"], test["mean_b"]) == ("sie", "en", 93.75, 50.0)
    assert test["statistic"] == wilcoxon_signed_rank([75, 100, 100, 100], [50, 50, 50, 50]).statistic
    # sie and en never share an occupation: nothing to pair there, and the next two sets are still tested
    apart = [("A", "d1", "nom", "feminine", "sie", "er", "sie"), ("A", "d1", "nom", "sternchen", "xier", "er", "er"),
             ("B", "d1", "nom", "de_e", "en", "er", "en")]
    assert [(t["a"], t["b"], t["n"]) for t in pronoun_tests(_items(apart))] == [("sie", "xier", 1)]


def test_a_test_between_equal_accuracies_has_no_effect():
    rows = [(o, "d1", "nom", system, target, "er", target) for o in "ABC"
            for system, target in (("feminine", "sie"), ("de_e", "en"))]
    (test,) = pronoun_tests(_items(rows))
    assert test["effect"] is None and test["mean_a"] == test["mean_b"] == 100.0


def test_fig5_in_the_comparison_leaves_out_the_items_without_an_introduction():
    items = _stereotype_items({"acc": [0, 0, 0, 0]})
    unintroduced = _items([("A", "none", "acc", "masculine", "er", None, "sie")] * 4)
    found = comparison_extras(pd.concat([items, unintroduced]), items)["fidelity_by_pronoun_case"]
    assert found["before"] == found["after"] and found["before"]["er"]["acc"]["accuracy"] == 100.0


def test_each_instance_counts_once_and_replicate_sets_are_reported_in_order():
    items = _items([("A", "d0", "nom", "masculine", "er", None, answer) for answer in ("er", "sie", "er", "er")]
                   + [("A", "none", "nom", "masculine", "er", None, answer) for answer in ("er", "er")])
    items["item_id"] = ["i1", "i2", "i1", "i3", "i4", "i4"]
    items["replicate"] = [2, 2, 1, 1, 1, 2]  # the no-context instance is in every set
    assert distinct(items)["item_id"].tolist() == ["i1", "i2", "i3", "i4"]
    assert distinct(items.drop(columns="item_id")).equals(items.drop(columns="item_id"))
    # set 1: i1, i3 and i4 right -> 100 (d0: 100); set 2: i1 and i4 right, i2 wrong -> 66.7 (d0: 50)
    sd = pytest.approx(np.std([100, 50], ddof=1))
    assert replicate_figures(items) == {
        "n_sets": 2,
        "overall": {"per_set": [100.0, pytest.approx(200 / 3)], "mean": pytest.approx(250 / 3),
                    "sd": pytest.approx(np.std([100, 200 / 3], ddof=1))},
        "settings": {"none": {"per_set": [100.0, 100.0], "mean": 100.0, "sd": 0.0},
                     "d0": {"per_set": [100.0, 50.0], "mean": 75.0, "sd": sd}}}
    one = replicate_figures(items[items["replicate"] == 1])
    assert one["overall"] == {"per_set": [100.0], "mean": 100.0, "sd": None}


def test_the_spread_over_occupations_needs_two_of_them():
    items = _items([("A", "d1", "nom", "masculine", "er", "sie", "er")])
    assert pronoun_spread(items, "er")["occupations"] == {"n": 1, "mean": 100.0, "sd": None}
    two = _items([("A", "d1", "nom", "masculine", "er", "sie", "er"), ("B", "d1", "nom", "masculine", "er", "sie", "sie")])
    assert pronoun_spread(two, "er")["occupations"]["sd"] == pytest.approx(np.std([100, 0], ddof=1))
