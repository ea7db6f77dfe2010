"""The Lou measures against values computed by hand."""

import numpy as np
import pytest

from queerbias.report.paired_stats import spearman
from queerbias.suites.lou.metrics import (
    classifier_bootstrap,
    flip_rate,
    macro_f1,
    preference_summary,
    ranking_consistency,
    upstream_f1,
)


def test_macro_f1_by_hand():
    # class 0: TP 2, FP 1, FN 1 -> 4/6; class 1: TP 1, FP 1, FN 1 -> 2/4; mean 7/12
    assert macro_f1([0, 0, 0, 1, 1], [0, 0, 1, 1, 0]) == pytest.approx(100 * 7 / 12)


def test_macro_f1_counts_a_class_only_predicted():
    # class 0: TP 1, FN 1 -> 2/3; class 1 (never true): TP 0, FP 1 -> 0; mean 1/3
    assert macro_f1([0, 0], [0, 1]) == pytest.approx(100 / 3)
    assert macro_f1([1, 0, 1], [1, 0, 1]) == 100.0


def test_flip_rate_by_hand():
    assert flip_rate([0, 1, 1, 0], [0, 0, 1, 1]) == 50.0
    assert flip_rate([2, 2], [2, 2]) == 0.0
    with pytest.raises(ValueError):
        flip_rate([0, 1], [0])


def test_preference_counts_ties_as_half():
    # per instance 0 (Δ < 0), 100 (Δ > 0), 50 (tie), 0: mean 150/4 = 37.5
    summary = preference_summary([-1.0, 2.0, 0.0, -3.0], np.random.default_rng(0), n_resamples=500)
    assert summary["mean_delta"] == pytest.approx(-0.5)
    assert summary["preference"] == 37.5 and summary["n_ties"] == 1
    assert -3.0 <= summary["ci_delta"][0] <= -0.5 <= summary["ci_delta"][1] <= 2.0  # within the data
    assert 0.0 <= summary["ci_preference"][0] <= 37.5 <= summary["ci_preference"][1] <= 100.0


def test_an_indifferent_model_shows_no_preference():
    summary = preference_summary([0.0] * 5, np.random.default_rng(0), n_resamples=100)
    assert summary["preference"] == 50.0 and summary["ci_preference"] == [50.0, 50.0]


def test_preference_of_nothing_is_undefined():
    assert preference_summary([], np.random.default_rng(0)) == {
        "mean_delta": None, "ci_delta": [None, None], "preference": None, "ci_preference": [None, None], "n_ties": 0}


def test_preference_intervals_follow_the_level_and_not_the_precision_of_the_deltas():
    deltas = np.float32([-1.3, 2.1, 0.4, -0.2, 0.9, 1.7])
    wide = preference_summary(deltas, np.random.default_rng(0), n_resamples=400)
    assert wide == preference_summary([float(x) for x in deltas], np.random.default_rng(0), n_resamples=400)
    narrow = preference_summary(deltas, np.random.default_rng(0), n_resamples=400, level=0.5)
    assert wide["ci_delta"][0] < narrow["ci_delta"][0] < narrow["ci_delta"][1] < wide["ci_delta"][1]


def test_upstream_f1_is_the_positive_class_f1_for_binary_labels():
    # labels 0 0 0 1 1, preds 0 0 1 1 0: class 1 TP 1, FP 1, FN 1 -> 2/4 = 50%
    # (macro-F1 averages it with class 0's 4/6: 7/12 = 58.3%)
    assert upstream_f1([0, 0, 0, 1, 1], [0, 0, 1, 1, 0]) == pytest.approx(50.0)
    assert upstream_f1([0, 0], [0, 0]) == 0.0  # no positive at all: F1 of class 1 is 0, as scikit-learn
    # TP 2, FP 0, FN 1 -> 4/5; one FP more -> 4/6
    assert upstream_f1([1, 1, 1, 0], [1, 1, 0, 0]) == pytest.approx(80.0)
    assert upstream_f1([1, 1, 1, 0], [1, 1, 0, 1]) == pytest.approx(100 * 4 / 6)
    # three classes: macro-F1, as upstream for the sentiment task
    assert upstream_f1([0, 1, 2], [0, 1, 1]) == pytest.approx(macro_f1([0, 1, 2], [0, 1, 1]))


def test_classifier_bootstrap_two_instances_by_hand():
    # instance 0 flips 0 -> 1 (wrong), instance 1 stays right. Resamples {0,0} (p 1/4): ΔF1 = 0 - 100,
    # flips 100; {0,1} (p 1/2): ΔF1 = (0 + 2/3)/2·100 - 100, flips 50; {1,1} (p 1/4): ΔF1 0, flips 0
    ci = classifier_bootstrap([0, 1], [0, 1], [1, 1], np.random.default_rng(0), n_resamples=2_000)
    assert ci["ci_delta_f1"] == pytest.approx([-100.0, 0.0])
    assert ci["ci_flip_rate"] == pytest.approx([0.0, 100.0])
    same = classifier_bootstrap([0, 1, 1], [0, 1, 0], [0, 1, 0], np.random.default_rng(0), n_resamples=50)
    assert same == {"ci_delta_f1": [0.0, 0.0], "ci_flip_rate": [0.0, 0.0]}


def test_classifier_bootstrap_matches_macro_f1_on_each_resample():
    labels, before, after = [0, 1, 2, 2, 1, 0, 1], [0, 1, 2, 1, 1, 2, 1], [1, 1, 2, 1, 0, 2, 2]
    ci = classifier_bootstrap(labels, before, after, np.random.default_rng(3), n_resamples=300)
    idx = np.random.default_rng(3).integers(0, 7, size=(300, 7))  # the same draws, one block
    y, b, a = (np.asarray(v) for v in (labels, before, after))
    delta = [macro_f1(y[i], a[i]) - macro_f1(y[i], b[i]) for i in idx]
    flips = [flip_rate(b[i], a[i]) for i in idx]
    assert ci["ci_delta_f1"] == pytest.approx(list(np.quantile(delta, [0.025, 0.975])))
    assert ci["ci_flip_rate"] == pytest.approx(list(np.quantile(flips, [0.025, 0.975])))
    again = classifier_bootstrap(labels, before, after, np.random.default_rng(3), n_resamples=300)
    assert again == ci


@pytest.mark.parametrize(("measure", "message"), [
    (macro_f1, "labels and predictions must be non-empty and equally long"),
    (upstream_f1, "labels and predictions must be non-empty and equally long"),
    (flip_rate, "prediction arrays must be non-empty and equally long"),
])
def test_measures_refuse_empty_or_unequal_inputs_and_take_one_instance(measure, message):
    for a, b in (([], []), ([0, 1], [0]), ([1], [0, 1])):
        with pytest.raises(ValueError, match=f"^{message}$"):
            measure(a, b)
    assert measure([1], [1]) == (0.0 if measure is flip_rate else 100.0)


def test_classifier_bootstrap_refuses_what_is_not_one_prediction_per_label():
    rng = np.random.default_rng(0)
    for labels, before, after in (([], [], []), ([0, 1], [0, 1], [0]), ([[0, 1]], [[0, 1]], [[0, 1]])):
        with pytest.raises(ValueError, match="^labels and predictions must be non-empty and equally long$"):
            classifier_bootstrap(labels, before, after, rng, n_resamples=10)
    assert classifier_bootstrap([1], [1], [0], rng, n_resamples=10) == {"ci_delta_f1": [-100.0, -100.0],
                                                                        "ci_flip_rate": [100.0, 100.0]}


def test_classifier_bootstrap_of_a_large_set_runs_in_blocks_with_a_short_last_one():
    """3,000 instances take 1,666 resamples a block (5M counts): 2,000 resamples are a full block and a
    short one. Every third prediction flips, always to a wrong label."""
    labels = np.arange(3000) % 2
    after = np.where(np.arange(3000) % 3 == 0, 1 - labels, labels)
    ci = classifier_bootstrap(labels, labels, after, np.random.default_rng(0), n_resamples=2000)
    assert ci["ci_flip_rate"][0] < 100 / 3 < ci["ci_flip_rate"][1] and ci["ci_flip_rate"][1] - ci["ci_flip_rate"][0] < 5
    assert -100 / 3 - 5 < ci["ci_delta_f1"][0] < ci["ci_delta_f1"][1] < -100 / 3 + 5


def _task(original: float, deltas: dict[str, float], flips: dict[str, float]) -> dict:
    return {"original": {"macro_f1": original}, **{s: {"macro_f1": original + d, "delta_f1": d, "flip_rate": flips[s]}
                                                    for s, d in deltas.items()}}


def test_ranking_consistency_over_the_tasks_every_model_has():
    strategies = ("Neutral", "GenderStern", "De-e")
    summaries = {
        "m1": {"tasks": {"x": _task(80, {"Neutral": -1, "GenderStern": -5, "De-e": -9}, dict.fromkeys(strategies, 2)),
                         "only-m1": _task(50, dict.fromkeys(strategies, 0), dict.fromkeys(strategies, 0))}},
        "m2": {"tasks": {"x": _task(60, {"Neutral": -2, "GenderStern": -3, "De-e": -4},
                                    {"Neutral": 1, "GenderStern": 3, "De-e": 5})}},
    }
    document = ranking_consistency(summaries, strategies)
    assert document["models"] == ["m1", "m2"] and list(document["tasks"]) == ["x"]
    task = document["tasks"]["x"]
    assert task["strategy_rankings"] == [{"a": "m1", "b": "m2", **spearman([-1, -5, -9], [-2, -3, -4]).to_dict()}]
    assert task["model_rankings"] == {s: spearman([80, 60], [80 + d1, 60 + d2]).to_dict() for s, d1, d2 in
                                      zip(strategies, (-1, -5, -9), (-2, -3, -4), strict=True)}
    assert document["f1_flip_correlation"] == spearman([-1, -5, -9, -2, -3, -4], [2, 2, 2, 1, 3, 5]).to_dict()
    # Fig. 5 over both models' cells of the shared task, each labelled with its model: original F1 80 and 60
    performance = document["performance"]
    assert [(c["model"], c["task"], c["strategy"], c["original_f1"], c["delta_f1"]) for c in performance["cells"]] == [
        (m, "x", s, f1, d) for m, f1, deltas in (("m1", 80, (-1, -5, -9)), ("m2", 60, (-2, -3, -4)))
        for s, d in zip(strategies, deltas, strict=True)]
    assert performance["spread"] == {"tasks": 1, "models": 2, "original_f1_values": 2}
    assert performance["delta_f1"] == spearman([80] * 3 + [60] * 3, [-1, -5, -9, -2, -3, -4]).to_dict()
    assert performance["flip_rate"] == spearman([80] * 3 + [60] * 3, [2, 2, 2, 1, 3, 5]).to_dict()
