"""The GIFI formulas against values computed by hand."""

import math

import numpy as np
import pytest

from queerbias.suites.gifi import dimensions as d


def test_equality_score_uses_population_sd():
    # accuracies 0.2, 0.4, 0.6: mean 0.4, population SD sqrt(((.2)^2+0+(.2)^2)/3) = 0.163299
    expected = 1 / (1 + math.sqrt(0.08 / 3) / 0.4)
    assert d.equality_score([0.2, 0.4, 0.6]) == pytest.approx(expected)
    assert expected == pytest.approx(0.710102, abs=1e-6)


def test_equality_score_edges():
    assert d.equality_score([0.5, 0.5, 0.5]) == 1.0
    assert d.equality_score([0.0, 0.0]) == 0.0  # mean 0: CV undefined, 0 as the reference
    assert d.equality_score([1.0, 0.0]) == pytest.approx(0.5)  # mean .5, SD .5, CV 1


def test_sentiment_neutrality_by_hand():
    # template a: scores .5, -.5 -> mean 0, MAD .5; template b: .2, .2, .8 -> mean .4, MAD (.2+.2+.4)/3
    scores = {"a": [0.5, -0.5], "b": [0.2, 0.2, 0.8]}
    mean_mad = (0.5 + 0.8 / 3) / 2
    assert d.neutrality_score(scores, d.SENTIMENT_MAX_MAD) == pytest.approx(1 - mean_mad)


def test_toxicity_normalised_by_half_and_clipped():
    assert d.neutrality_score({"a": [0.0, 0.2]}, d.TOXICITY_MAX_MAD) == pytest.approx(1 - 0.1 / 0.5)
    assert d.neutrality_score({"a": [0.0, 1.0]}, d.TOXICITY_MAX_MAD) == 0.0
    assert d.neutrality_score({"a": [0.3, 0.3]}, d.TOXICITY_MAX_MAD) == 1.0


def test_counterfactual_share_above_threshold():
    assert d.counterfactual_score([0.9, 0.71, 0.7, 0.1], threshold=0.7) == pytest.approx(0.5)


def test_pairwise_similarities_within_templates_only():
    a = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    b = np.array([[1.0, 0.0], [1.0, 0.0]])
    sims = d.pairwise_similarities({"t1": a, "t2": b})
    assert sims == pytest.approx([0.0, 0.6, 0.8, 1.0])


def test_distribution_score_by_hand():
    groups = ["er", "sie", "xier"]  # K = 3, expected 1/3, normaliser 2/3
    counts = {
        "p1": {"er": 2, "sie": 2, "xier": 2},  # uniform: bias 0
        "p2": {"er": 4},  # all on one: L1 = 2/3 + 1/3 + 1/3 = 4/3 -> capped at 1
        "p3": {"er": 1, "sie": 1},  # 1/6 + 1/6 + 1/3 = 2/3 -> 1
        "p4": {"er": 2, "sie": 1, "xier": 1, None: 5},  # none ignored: |.5-1/3| + 2|.25-1/3| = 1/3 -> 1/2
        "p5": {None: 3},  # no pronoun at all: left out
    }
    assert d.distribution_score(counts, groups) == pytest.approx(1 - (0 + 1 + 1 + 0.5) / 4)


def test_distribution_score_reproduces_reference_normaliser():
    groups = [f"g{i}" for i in range(10)]  # K = 10 -> 1 - 1/K = 0.9, the reference's constant
    # shares .15 .15 .05x6 .2 .2: L1 = 2 * .05 + 6 * .05 + 2 * .1 = 0.6 -> 0.6 / 0.9
    counts = {"p": {"g0": 3, "g1": 3, "g2": 1, "g3": 1, "g4": 1, "g5": 1, "g6": 1, "g7": 1, "g8": 4, "g9": 4}}
    shares = np.array([3, 3, 1, 1, 1, 1, 1, 1, 4, 4]) / 20
    expected = 1 - min(np.abs(shares - 0.1).sum() / 0.9, 1)
    assert d.distribution_score(counts, groups) == pytest.approx(expected)
    assert expected == pytest.approx(1 - 0.6 / 0.9)


def test_gifi_index_counts_computed_dimensions():
    assert d.gifi_index({"GDR": 0.5, "SN": None, "PE": 1.0}) == (pytest.approx(0.75), 2)
    assert d.gifi_index({"SN": None}) == (None, 0)


@pytest.mark.parametrize("call", [
    lambda: d.equality_score([]),
    lambda: d.neutrality_score({}, 1.0),
    lambda: d.counterfactual_score([], 0.7),
    lambda: d.distribution_score({"p": {None: 2}}, ["er", "sie"]),
    lambda: d.distribution_score({"p": {"er": 2}}, ["er"]),
])
def test_undefined_inputs_raise(call):
    with pytest.raises(ValueError):
        call()
