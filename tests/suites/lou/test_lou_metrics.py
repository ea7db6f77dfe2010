"""The Lou measures against values computed by hand."""

import numpy as np
import pytest

from queerbias.suites.lou.metrics import (
    classifier_bootstrap,
    flip_rate,
    macro_f1,
    preference_summary,
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
    assert summary["ci_delta"][0] <= -0.5 <= summary["ci_delta"][1]
    assert 0.0 <= summary["ci_preference"][0] <= 37.5 <= summary["ci_preference"][1] <= 100.0


def test_an_indifferent_model_shows_no_preference():
    summary = preference_summary([0.0] * 5, np.random.default_rng(0), n_resamples=100)
    assert summary["preference"] == 50.0 and summary["ci_preference"] == [50.0, 50.0]


def test_preference_of_nothing_is_undefined():
    assert preference_summary([], np.random.default_rng(0))["preference"] is None


def test_upstream_f1_is_the_positive_class_f1_for_binary_labels():
    # labels 0 0 0 1 1, preds 0 0 1 1 0: class 1 TP 1, FP 1, FN 1 -> 2/4 = 50%
    # (macro-F1 averages it with class 0's 4/6: 7/12 = 58.3%)
    assert upstream_f1([0, 0, 0, 1, 1], [0, 0, 1, 1, 0]) == pytest.approx(50.0)
    assert upstream_f1([0, 0], [0, 0]) == 0.0  # no positive at all: F1 of class 1 is 0, as scikit-learn
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
