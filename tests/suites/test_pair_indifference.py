"""Pair-level gap, stereotype excess, crossed and harmful groups: hand-computed on small rows."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from queerbias.comparison.compare import compare_runs, write_outputs
from queerbias.comparison.runs import load_run
from queerbias.errors import QueerbiasError
from queerbias.report.options import CompareOptions
from queerbias.suites.pairs.declaration import PairSettings
from queerbias.suites.pairs.indifference import (
    direction_change,
    gap_change,
    harm_reasons,
    pair_gap_summary,
    specificity,
    stereotype_excess,
)
from queerbias.suites.pairs.suite import PairsSuite
from report.score_dirs import with_scores, write_score_dir

FAST = CompareOptions(resamples=500, seed=3)


def _rows(group_scores: dict[str, list[tuple[float, float]]]) -> pd.DataFrame:
    """Pairs with the given (score_more, score_less) per group."""
    rows = [{"pair_id": f"{group}-{i}", "group": group, "counterfactual_group": "straight", "category": "",
             "sent_more": f"{group} {i} more.", "sent_less": f"{group} {i} less."}
            for group, scores in group_scores.items() for i in range(len(scores))]
    scores = [s for scores in group_scores.values() for s in scores]
    return with_scores(pd.DataFrame(rows), [m for m, _ in scores], [le for _, le in scores])


# before: a has d = +2, -0.5; b has d = +1, +3.  after: a +0.2, +1; b -0.1, +0.3
BEFORE = _rows({"a": [(-10.0, -12.0), (-10.5, -10.0)], "b": [(-9.0, -10.0), (-7.0, -10.0)]})
AFTER = _rows({"a": [(-10.0, -10.2), (-9.0, -10.0)], "b": [(-10.1, -10.0), (-9.7, -10.0)]})


def test_summary_gap_and_excess_by_hand():
    summary = PairsSuite().summarise(BEFORE, PairSettings())
    gap = summary["pair_gap"]
    assert gap["margin"] == 0.693
    assert gap["overall"] == {"n": 4, "mean_abs_d": pytest.approx((2 + 0.5 + 1 + 3) / 4), "below_margin": 25.0}
    assert gap["groups"]["a"] == {"n": 2, "mean_abs_d": pytest.approx(1.25), "below_margin": 50.0}
    assert gap["groups"]["b"] == {"n": 2, "mean_abs_d": pytest.approx(2.0), "below_margin": 0.0}
    # bias a 50, b 100: excess (0 + 50) / 2
    assert summary["direction"] == {"stereotype_excess": 25.0, "n_groups": 2, "stereotypical_groups": ["b"]}
    wide = PairsSuite().summarise(BEFORE, PairSettings(margin=1.5))["pair_gap"]
    assert wide["overall"]["below_margin"] == 50.0  # 0.5 and 1.0 are below 1.5


def test_headline_and_render_carry_the_figures():
    suite = PairsSuite()
    summary = suite.summarise(BEFORE, PairSettings())
    extras = suite.headline(summary).to_dict()
    assert extras["pair_gap"] == {"margin": 0.693, "n": 4, "mean_abs_d": 1.625, "below_margin": 25.0}
    assert extras["stereotype_excess"] == 25.0
    text = "\n".join(block for block in suite.render(summary) if isinstance(block, str))
    assert "mean 1.625 nats; 25.0% of pairs below the margin of 0.693 nats" in text
    assert "groups above 50: b" in text
    old = {key: value for key, value in summary.items() if key not in ("pair_gap", "direction")}
    assert "pair_gap" not in suite.headline(old).to_dict()  # a summary written before the figures


def test_margin_must_be_positive():
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(QueerbiasError, match="--margin"):
            PairSettings(margin=bad)


def _aligned(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"group": before["group"],
                         "d_before": before["score_more"] - before["score_less"],
                         "d_after": after["score_more"] - after["score_less"],
                         "biased_before": before["biased"], "biased_after": after["biased"]})


def test_gap_change_by_hand():
    gap = gap_change(_aligned(BEFORE, AFTER), 0.693, np.random.default_rng(0), 400)
    assert gap["abs_d_before"] == pytest.approx(1.625)
    assert gap["abs_d_after"] == pytest.approx((0.2 + 1 + 0.1 + 0.3) / 4)
    assert gap["delta_abs_d"] == pytest.approx(0.4 - 1.625)
    assert (gap["below_margin_before"], gap["below_margin_after"]) == pytest.approx((25.0, 75.0))
    low, high = gap["ci_abs_d"]
    assert low <= gap["delta_abs_d"] <= high < 0


def test_gap_change_counts_a_pair_of_several_groups_once():
    """Rows weighted 1 give the unweighted figures, intervals included (the same strata, the same draws); a pair in
    two groups carries 1/2 in each, so over pairs it counts once: n and the means are over pairs, not rows."""
    aligned = _aligned(BEFORE, AFTER)
    plain = gap_change(aligned, 0.693, np.random.default_rng(0), 400)
    weighted = gap_change(aligned.assign(weight=1.0), 0.693, np.random.default_rng(0), 400)
    assert weighted.keys() == plain.keys()
    for key, value in plain.items():
        assert weighted[key] == pytest.approx(value), key
    # pairs: P1 (group a, |d| 2 -> 0.5), P2 (groups a and b, |d| 0.5 -> 3): rows a, a, b, P2's weighted 1/2;
    # P3 (group b, |d| 0.693 -> 0.693), at the margin: not below it
    rows = pd.DataFrame({"group": ["a", "a", "b", "b"], "d_before": [2.0, -0.5, -0.5, 0.693],
                         "d_after": [0.5, 3.0, 3.0, -0.693], "weight": [1.0, 0.5, 0.5, 1.0]})
    gap = gap_change(rows, 0.693, np.random.default_rng(0), 400)
    assert (gap["n"], gap["n_groups"]) == (3, 2)
    assert (gap["abs_d_before"], gap["abs_d_after"]) == pytest.approx(((2 + 0.5 + 0.693) / 3, (0.5 + 3 + 0.693) / 3))
    assert (gap["below_margin_before"], gap["below_margin_after"]) == pytest.approx((100 / 3, 100 / 3))
    low, high = gap["ci_abs_d"]
    assert gap["delta_abs_d"] == pytest.approx(1.0 / 3) and low <= gap["delta_abs_d"] <= high


def test_a_flip_of_direction_leaves_the_gap_and_the_distance_but_raises_the_excess():
    """Group c flips from 0% to 100% stereotypical with the same |d|: the distance to indifference
    stays at 50, |d| stays, but the excess rises and c is harmful (twice over)."""
    before = _rows({"c": [(-11.0, -10.0)] * 5, "d": [(-10.0, -11.0), (-11.0, -10.0)]})
    after = _rows({"c": [(-10.0, -11.0)] * 5, "d": [(-10.0, -11.0), (-11.0, -10.0)]})
    aligned = _aligned(before, after)
    gap = gap_change(aligned, 0.693, np.random.default_rng(0), 200)
    assert gap["delta_abs_d"] == 0 and gap["ci_abs_d"] == [0, 0]
    direction = direction_change(aligned, np.random.default_rng(0), 200)
    assert (direction["excess_before"], direction["excess_after"]) == (0.0, 25.0)  # c: max(0, 100 - 50) / 2 groups
    assert direction["ci_excess"][0] > 0 and direction["excess_raised"]
    c = direction["groups"]["c"]
    assert c["crossed"] and direction["crossed"] == ["c"]
    assert c["harmful"] == ["stereotype excess rose significantly", "moved from below 40 to above 60"]
    assert direction["harmful"] == ["c"] and not direction["groups"]["d"]["harmful"]


def test_crossing_is_before_at_most_50_and_after_above():
    direction = direction_change(_aligned(BEFORE, AFTER), np.random.default_rng(0), 200)
    # a: 50 -> 100 crossed; b: 100 -> 50 did not
    assert direction["crossed"] == ["a"]
    assert (direction["excess_before"], direction["excess_after"]) == (25.0, 25.0)
    assert not direction["groups"]["a"]["harmful"]  # from 50, not below 40, and its interval reaches 0


def test_harm_reasons_thresholds():
    assert harm_reasons({"ci_excess": [0.0, 5.0], "bias_before": 39.9, "bias_after": 60.1}) == \
        ["moved from below 40 to above 60"]
    assert harm_reasons({"ci_excess": [0.0, 5.0], "bias_before": 40.0, "bias_after": 90.0}) == []
    assert harm_reasons({"ci_excess": [0.1, 5.0], "bias_before": 55.0, "bias_after": 60.0}) == \
        ["stereotype excess rose significantly"]


def test_summary_helpers():
    groups = ["x", "x", "y"]
    summary = pair_gap_summary(groups, np.array([1.0, -0.2, 0.0]), 0.5, ["y", "x"])
    assert summary["groups"] == {"y": {"n": 1, "mean_abs_d": 0.0, "below_margin": 100.0},
                                 "x": {"n": 2, "mean_abs_d": 0.6, "below_margin": 50.0}}
    assert summary["overall"] == {"n": 3, "mean_abs_d": pytest.approx(0.4), "below_margin": pytest.approx(200 / 3)}
    assert summary["margin"] == 0.5
    assert stereotype_excess({"x": 70.0, "y": 20.0, "z": None}) == {
        "stereotype_excess": 10.0, "n_groups": 2, "stereotypical_groups": ["x"]}


def test_specificity_ratio():
    figures = specificity({"abs_d_before": 2.0, "abs_d_after": 1.0}, {"abs_d_before": 4.0, "abs_d_after": 3.0})
    assert figures == {"stereotype_shrink_pct": 50.0, "definitional_shrink_pct": 25.0, "ratio": 2.0}
    assert specificity({"abs_d_before": 2.0, "abs_d_after": 1.0},
                       {"abs_d_before": 1.0, "abs_d_after": 1.5})["ratio"] is None  # knowledge gap grew
    assert specificity({"abs_d_before": None}, {"abs_d_before": 1.0, "abs_d_after": 1.0}) is None


def test_compare_stores_the_figures_in_delta_json_and_delta_md(tmp_path):
    before = _rows({"c": [(-11.0, -10.0)] * 6, "d": [(-10.0, -11.5), (-11.0, -10.2), (-9.0, -10.0)]})
    after = _rows({"c": [(-10.0, -10.4)] * 6, "d": [(-10.0, -10.1), (-11.0, -10.9), (-9.0, -10.0)]})
    runs = [load_run(write_score_dir(tmp_path / name, rows, spec=name))
            for name, rows in (("base", before), ("after", after))]
    document = compare_runs(runs[0], runs[1:], FAST)
    comparison = document["comparisons"][0]
    gap, direction = comparison["pair_gap"], comparison["direction"]
    assert gap["abs_d_before"] == pytest.approx((6 * 1.0 + 1.5 + 0.8 + 1.0) / 9)
    assert gap["abs_d_after"] == pytest.approx((6 * 0.4 + 0.1 + 0.1 + 1.0) / 9)
    assert gap["below_margin_after"] == pytest.approx(100 * 8 / 9)
    assert {f"{m}_{k}" for m in ("abs_d", "below_margin") for k in ("before", "after")} <= set(gap)
    assert {"delta_abs_d", "ci_abs_d", "p_abs_d", "delta_below_margin", "ci_below_margin", "p_below_margin"} <= set(gap)
    assert direction["crossed"] == ["c"] and direction["harmful"] == ["c"]
    assert {"excess_before", "excess_after", "delta_excess", "ci_excess", "p_excess"} <= set(direction)
    write_outputs(document, tmp_path / "out")
    stored = json.loads((tmp_path / "out" / "delta.json").read_text())["comparisons"][0]
    assert stored["pair_gap"] == gap and stored["direction"] == direction
    markdown = (tmp_path / "out" / "delta.md").read_text()
    assert "mean \\|d\\| (nats)" in markdown and "harmful for: c" in markdown
    assert "moved from below 40 to above 60" in markdown
