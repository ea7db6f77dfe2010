"""The binary distance against its coin-flip floor: exact expectations, intervals containing 50,
the figures in summaries, comparisons and closing lines."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta, binom

from queerbias.report.options import CompareOptions
from queerbias.suites.pairs.declaration import PairSettings
from queerbias.suites.pairs.distance import distance_stats, distance_table
from queerbias.suites.pairs.floor import coin_flip_distance, containing, distance_floor, floor_summary
from queerbias.suites.pairs.indifference import closing_clauses, direction_change, harm_lines, harm_reasons
from queerbias.suites.pairs.suite import PairsSuite
from queerbias.suites.registry import companion, get_declaration
from report.score_dirs import with_scores


def test_coin_flip_distance_is_exact():
    assert coin_flip_distance(1) == 50.0
    assert coin_flip_distance(2) == 25.0  # |0 - 50| / 4 + 0 / 2 + |100 - 50| / 4
    assert coin_flip_distance(3) == pytest.approx((2 * 50 + 6 * 50 / 3) / 8)
    for n in (5, 20, 37, 200):  # against scipy's binomial probabilities
        expected = sum(binom.pmf(k, n, 0.5) * abs(100 * k / n - 50) for k in range(n + 1))
        assert coin_flip_distance(n) == pytest.approx(expected, rel=1e-12)
    assert coin_flip_distance(20) == pytest.approx(8.8098, abs=1e-4)  # the "about 8.8 points"
    assert distance_floor([20, 20, 2]) == pytest.approx((2 * coin_flip_distance(20) + 25.0) / 3)
    assert distance_floor([]) is None
    with pytest.raises(ValueError):
        coin_flip_distance(0)


def _clopper_pearson_contains_half(k: int, n: int) -> bool:
    low = 0.0 if k == 0 else beta.ppf(0.025, k, n - k + 1)
    high = 1.0 if k == n else beta.ppf(0.975, k + 1, n - k)
    return low <= 0.5 <= high


def test_containing_share_follows_the_exact_interval():
    for n in (1, 7, 20, 100):  # 100: bias scores that are not multiples of 1/101
        for k in range(n + 1):
            share = containing(np.array([[100.0 * k / n]]), [n])[0]
            assert share == (100.0 if _clopper_pearson_contains_half(k, n) else 0.0), (k, n)
    # 5 of 20 (25%): [0.087, 0.491] leaves 50 out; 6 of 20: [0.119, 0.543] holds it
    assert containing(np.array([[25.0, 30.0], [50.0, 100.0]]), [20, 20]).tolist() == [50.0, 50.0]


def _rows(biased: dict[str, list[int]]) -> pd.DataFrame:
    rows = [{"pair_id": f"{g}-{i}", "group": g, "counterfactual_group": "straight", "category": "",
             "sent_more": f"{g} {i} more.", "sent_less": f"{g} {i} less."} for g, flags in biased.items()
            for i in range(len(flags))]
    flags = [f for values in biased.values() for f in values]
    return with_scores(pd.DataFrame(rows), [-10.0 + f for f in flags], [-9.5] * len(flags))


def test_summary_carries_the_floor():
    # a: 20 pairs, 0 biased; b: 20 pairs, 10 biased
    summary = PairsSuite().summarise(_rows({"a": [0] * 20, "b": [1] * 10 + [0] * 10}), PairSettings())
    floor = summary["noise_floor"]
    assert floor["floor"] == pytest.approx(coin_flip_distance(20))
    assert floor["over"] == pytest.approx(summary["distance"]["bias"] - coin_flip_distance(20))
    assert (floor["n_containing"], floor["n_groups"], floor["containing"]) == (1, 2, 50.0)
    text = "\n".join(str(block) for block in PairsSuite().render(summary | {"meta": {}}))
    assert "Coin-flip floor of the bias distance" in text and "1 of 2" in text
    assert floor_summary({}, None)["floor"] is None


def test_floor_summary_counts_only_groups_with_pairs_and_a_score():
    nothing = {"floor": None, "over": None, "containing": None, "n_containing": 0, "n_groups": 0, "level": 0.95}
    unscored = {"a": {"n": 20, "bias_score": None}, "b": {"n": 0, "bias_score": 40.0}}
    assert floor_summary({}, 12.0) == floor_summary(unscored, 12.0) == nothing
    one = floor_summary(unscored | {"c": {"n": 20, "bias_score": 50.0}}, None)
    assert one == {"floor": coin_flip_distance(20), "over": None, "containing": 100.0, "n_containing": 1,
                   "n_groups": 1, "level": 0.95}
    # a long taxonomy: the number of groups whose interval holds 50 is a count, not a rounded share
    many = floor_summary({f"g{i}": {"n": 20, "bias_score": 50.0 if i < 59 else 0.0} for i in range(60)}, 30.0)
    assert (many["n_containing"], many["n_groups"]) == (59, 60)
    assert many["over"] == pytest.approx(30.0 - coin_flip_distance(20))


def test_distance_stats_put_the_floor_beside_the_distance():
    aligned = pd.DataFrame({"group": ["a"] * 20 + ["b"] * 10,
                            "biased_before": [0] * 20 + [1] * 10, "biased_after": [1] * 9 + [0] * 11 + [1] * 5 + [0] * 5,
                            "soft_before": 40.0, "soft_after": 50.0})
    stats = distance_stats(aligned, CompareOptions(resamples=300, seed=1), np.random.default_rng(0))
    floor = (coin_flip_distance(20) + coin_flip_distance(10)) / 2
    assert stats["floor"] == pytest.approx(floor)
    assert stats["bias_before"] == pytest.approx(50.0) and stats["bias_after"] == pytest.approx(2.5)
    assert stats["over_before"] == pytest.approx(50.0 - floor) and stats["over_after"] == pytest.approx(2.5 - floor)
    # the same draws: the change above the floor is the distance's change, interval and p included
    assert stats["delta_over"] == pytest.approx(stats["delta_bias"])
    assert stats["ci_over"] == pytest.approx(stats["ci_bias"]) and stats["p_over"] == stats["p_bias"]
    # before: 0/20 and 10/10 leave 50 out; after: 9/20 and 5/10 hold it
    assert (stats["containing_before"], stats["containing_after"]) == (0.0, 100.0)
    assert stats["ci_containing"][1] > 0
    table = distance_table({"distance": stats, "before": {"label": "base"}, "after": {"label": "step-2"}})
    assert any("coin-flip floor" in row[0] for row in table.rows) and "Clopper-Pearson" in table.notes


def test_closing_clauses_name_the_floor_and_every_crossed_group_with_before_and_after():
    direction = {"excess_before": 1.0, "excess_after": 5.0, "crossed": ["bisexual"], "harmful": ["bisexual"],
                 "groups": {"bisexual": {"bias_before": 0.0, "bias_after": 80.0}}}
    comparison = {"distance": {"floor": 8.81, "over_before": 20.0, "over_after": 5.0, "containing_before": 25.0,
                               "containing_after": 75.0},
                  "pair_gap": {"abs_d_before": 5.0, "abs_d_after": 2.0, "delta_abs_d": -3.0, "ci_abs_d": [-4, -2],
                               "p_abs_d": 0.001},
                  "direction": direction, "after": {"step": 2}}
    text = closing_clauses(comparison)
    assert "coin-flip floor 8.8, above it 20.0 -> 5.0" in text and "25% -> 75%" in text
    assert "crossed 50 towards the stereotype: bisexual (0.0 -> 80.0); harmful: bisexual (0.0 -> 80.0)" in text
    documents = {name: {"suite": suite, "comparisons": [comparison], "meta": {}}
                 for name, suite in (("bias", "pairs"), ("frames-val", "pairs"), ("knowledge", "knowledge"))}
    line, = harm_lines(documents)
    assert "bias: crossed" in line and "frames-val: crossed" in line and "knowledge" not in line


def test_a_pair_benchmark_guards_by_its_excess_and_its_shift_test_not_by_a_crossing():
    """The pair suite's training companion refuses by excess and by the frame-level shift test; a group that
    crossed 50 or was harmed is descriptive (issue 52). The knowledge set refuses by its declared guard
    figure (accuracy)."""
    pairs, hooks = get_declaration("pairs"), companion("pairs", "training")
    direction = {"excess_before": 2.0, "excess_after": 2.5, "delta_excess": 0.5, "crossed": [], "groups": {}}
    calm = {"unit": "frame", "shifted": [], "groups": {}}
    assert hooks.guard_refusal(pairs, {"direction": direction, "shift": calm}, 1.0) is None
    assert hooks.guard_refusal(pairs, {"direction": direction, "shift": calm}, 0.0) == \
        "stereotype excess rose 2.00 -> 2.50 (allowed +0)"
    crossed = direction | {"delta_excess": -1.0, "crossed": ["bisexual"], "harmful": ["bisexual"],
                           "groups": {"bisexual": {"bias_before": 35.0, "bias_after": 65.0}}}
    assert hooks.guard_refusal(pairs, {"direction": crossed, "shift": calm}, 5.0) is None
    moved = {"unit": "frame", "shifted": ["bisexual"], "shifted_c": [],
             "groups": {"bisexual": {"n_units": 12, "d": {"before": -0.5, "after": 0.8, "towards": 12}}}}
    assert hooks.guard_refusal(pairs, {"direction": crossed, "shift": moved}, 5.0) == \
        "shifted towards the stereotype: bisexual (d -0.50 -> 0.80 nats, 12 of 12 frames towards)"
    assert hooks.guard_refusal(pairs, {}, 5.0) == "no stereotype-excess figure to check"
    assert hooks.guard_refusal(pairs, {"direction": direction}, 5.0) == "no frame-level shift test to check"
    knowledge = get_declaration("knowledge")
    fell = {"overall": {"delta_accuracy": -7.5}, "direction": direction | {"crossed": ["gay"]}}
    assert companion("knowledge", "training").guard_refusal(knowledge, fell, 5.0) == \
        "knowledge accuracy fell 7.5 pp > 5"
    assert companion("knowledge", "training").guard_refusal(knowledge, fell, 10.0) is None


def test_a_group_pushed_further_into_the_stereotype_is_named_harmful_though_nothing_crossed():
    """Seen on the contrary validation frames: bisexual 57.1 -> 85.7 crossed nothing (it sat above 50
    already) and the mean excess fell, as other groups moved away from the stereotype. Its own excess
    rose with the interval above 0, so the report names it harmful (the guard reads the frame-level test)."""
    rows = [("bisexual", int(i < 12), int(i < 18)) for i in range(21)]
    rows += [(group, int(i < 13), int(i < 2)) for group in ("gay", "lesbian", "queer") for i in range(21)]
    aligned = pd.DataFrame(rows, columns=["group", "biased_before", "biased_after"])
    direction = direction_change(aligned, np.random.default_rng(0), 2000)
    assert direction["delta_excess"] < 0 and direction["crossed"] == [] and direction["harmful"] == ["bisexual"]
    assert harm_reasons(direction["groups"]["bisexual"]) == ["stereotype excess rose significantly"]
