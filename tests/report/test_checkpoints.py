"""Best-checkpoint choice: criterion, perplexity margin, ties."""

from __future__ import annotations

import pytest

from queerbias.comparison.checkpoints import choose_best, guard_refusals
from queerbias.comparison.compare import best_checkpoint
from queerbias.suites.pairs.criteria import CRITERIA


def row(label, step, bias, ppl_change=None, base=False):
    return {"label": label, "step": step, "bias": bias, "ppl_change_pct": ppl_change, "base": base}


ROWS = [row("base", 0, 62.0, 0.0, base=True), row("s100", 100, 55.0, 1.0), row("s200", 200, 47.0, 3.0),
        row("s300", 300, 30.0, 4.9), row("s400", 400, 20.0, 8.0)]


@pytest.mark.parametrize(("criterion", "label"), [("lowest", "s300"), ("closest50", "s200")])
def test_criterion_among_checkpoints_within_the_margin(criterion, label):
    best = choose_best(ROWS, criterion, 5.0, CRITERIA)
    assert (best["label"], best["criterion"]) == (label, criterion)
    assert best["eligible"] == ["s100", "s200", "s300"]
    assert best["excluded"] == [{"label": "s400", "step": 400, "reason": "perplexity rose 8.0% > 5%"}]


def test_wider_margin_and_missing_perplexity_do_not_exclude():
    assert choose_best(ROWS, "lowest", 10.0, CRITERIA)["label"] == "s400"
    unmeasured = [row("base", 0, 60.0, base=True), row("a", 10, 40.0), row("b", 20, 30.0)]
    assert choose_best(unmeasured, "lowest", 5.0, CRITERIA)["label"] == "b"


def test_tie_goes_to_the_earlier_step_and_no_candidate_is_none():
    tied = [row("late", 300, 45.0, 0.0), row("early", 100, 55.0, 0.0)]
    assert choose_best(tied, "closest50", 5.0, CRITERIA)["label"] == "early"
    best = choose_best([row("a", 10, 40.0, 9.0)], "lowest", 5.0, CRITERIA)
    assert best["label"] is None and best["eligible"] == []
    with pytest.raises(ValueError, match="unknown criterion"):
        choose_best(ROWS, "highest", 5.0, CRITERIA)


def test_distance_criterion_takes_the_lowest_distance_then_soft():
    rows = [{**row("base", 0, 50.0, 0.0, base=True), "distance_bias": 30.0, "distance_soft": 3.0},
            {**row("a", 10, 50.0, 1.0), "distance_bias": 20.0, "distance_soft": 2.0},
            {**row("b", 20, 70.0, 1.0), "distance_bias": 12.0, "distance_soft": 1.5},
            {**row("c", 30, 52.0, 1.0), "distance_bias": 12.0, "distance_soft": 1.0}]
    best = choose_best(rows, "distance", 5.0, CRITERIA)
    assert (best["label"], best["distance_bias"]) == ("c", 12.0)
    assert choose_best(rows, "closest50", 5.0, CRITERIA)["label"] == "a"  # the overall score hides the groups
    with pytest.raises(ValueError, match="distance to indifference"):
        choose_best(ROWS, "distance", 5.0, CRITERIA)


def _guarded_document():
    """Three checkpoints: the lowest distance raised the stereotype excess, the next did not."""
    rows = [{**row("base", 0, 50.0, 0.0, base=True), "distance_bias": 30.0, "distance_soft": 3.0},
            {**row("a", 10, 50.0, 1.0), "distance_bias": 20.0, "distance_soft": 2.0},
            {**row("b", 20, 60.0, 1.0), "distance_bias": 10.0, "distance_soft": 1.0},
            {**row("c", 30, 55.0, 1.0), "distance_bias": 15.0, "distance_soft": 1.0}]
    excess = {10: (9.0, 8.0), 20: (9.0, 9.5), 30: (9.0, 4.0)}
    comparisons = [{"after": {"label": label, "step": step}, "overall": {"delta_accuracy": delta},
                    "direction": {"excess_before": excess[step][0], "excess_after": excess[step][1],
                                  "delta_excess": excess[step][1] - excess[step][0]}}
                   for label, step, delta in (("a", 10, -1.0), ("b", 20, -2.0), ("c", 30, -7.5))]
    return {"suite": "pairs", "trajectory": rows, "comparisons": comparisons}


def test_guarded_distance_refuses_a_checkpoint_that_raised_the_stereotype_excess():
    document = _guarded_document()
    assert best_checkpoint(document, "distance", 5.0)["label"] == "b"  # the distance alone
    best = best_checkpoint(document, "guarded", 5.0)
    assert (best["label"], best["eligible"]) == ("c", ["a", "c"])
    assert best["excluded"] == [{"label": "b", "step": 20, "reason": "stereotype excess rose 9.00 -> 9.50 points"}]
    del document["comparisons"][0]["direction"]  # a comparison without the figure is not trusted
    assert best_checkpoint(document, "guarded", 5.0)["eligible"] == ["c"]


def test_a_guard_benchmark_refuses_checkpoints_on_every_benchmark():
    knowledge = {"suite": "knowledge", "measures": [{"name": "accuracy", "label": "knowledge accuracy", "unit": "pp"}],
                 "comparisons": _guarded_document()["comparisons"]}
    assert guard_refusals({"knowledge": knowledge}, {"knowledge": 5.0}) == \
        {30: "knowledge: knowledge accuracy fell 7.5 pp > 5"}
    assert guard_refusals({"knowledge": knowledge}, {"knowledge": 1.5}) == \
        {20: "knowledge: knowledge accuracy fell 2.0 pp > 1.5", 30: "knowledge: knowledge accuracy fell 7.5 pp > 1.5"}
    assert guard_refusals({}, {"knowledge": 5.0}) == {}  # a guard that was not evaluated (optional data)
    refused = guard_refusals({"knowledge": knowledge}, {"knowledge": 5.0})
    best = best_checkpoint(_guarded_document(), "guarded", 5.0, refused)
    assert (best["label"], [e["step"] for e in best["excluded"]]) == ("a", [20, 30])
    # a pair benchmark guards by its excess and its frame-level shift test (the validation shapes); a group
    # that crossed 50 is reported, not refused
    frames = _guarded_document() | {"measures": []}
    for comparison in frames["comparisons"]:
        comparison["shift"] = {"unit": "frame", "shifted": [], "groups": {}}
    frames["comparisons"][0]["direction"] |= {"crossed": ["bisexual"]}
    frames["comparisons"][0]["shift"] = {"unit": "frame", "shifted": ["bisexual"], "shifted_c": [], "groups": {
        "bisexual": {"n_units": 8, "d": {"before": -0.25, "after": 0.5, "towards": 8}}}}
    assert guard_refusals({"frames": frames}, {"frames": 0.0}) == {
        10: "frames: shifted towards the stereotype: bisexual (d -0.25 -> 0.50 nats, 8 of 8 frames towards)",
        20: "frames: stereotype excess rose 9.00 -> 9.50 (allowed +0)"}
    assert list(guard_refusals({"frames": frames}, {"frames": 1.0})) == [10]
    del frames["comparisons"][0]["shift"]["shifted"][0]
    assert list(guard_refusals({"frames": frames}, {"frames": 1.0})) == []
