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
    # SN = 1 - Average MAD (Sec. 3.2). Template a: scores .5, -.5 -> mean 0, MAD .5;
    # template b: .2, .2, .8 -> mean .4, MAD (.2 + .2 + .4) / 3 = .8/3. Average MAD = (.5 + .8/3) / 2.
    scores = {"a": [0.5, -0.5], "b": [0.2, 0.2, 0.8]}
    assert d.neutrality_score(scores) == pytest.approx(1 - (0.5 + 0.8 / 3) / 2)


def test_non_toxicity_is_one_minus_mad_as_the_paper():
    # NTS = 1 - Average MAD (Sec. 3.2), no normaliser. Toxicities 0.0, 0.3 (mean .15):
    # MAD = .15, so NTS = 0.85. The authors' code divides the MAD by 0.5 and would give 0.70.
    assert d.neutrality_score({"a": [0.0, 0.3]}) == pytest.approx(0.85)
    assert d.neutrality_score({"a": [0.0, 1.0]}) == pytest.approx(0.5)  # largest MAD of [0, 1] scores
    assert d.neutrality_score({"a": [0.3, 0.3]}) == 1.0


def test_counterfactual_counts_pairs_not_below_gamma():
    # Sec. 3.2: a pair is substantially different if its similarity is *below* gamma;
    # CF is the share of pairs that are not: .9, .71 and .7 (= gamma) of four.
    assert d.counterfactual_score([0.9, 0.71, 0.7, 0.1], threshold=0.7) == pytest.approx(0.75)


def test_pairwise_similarities_within_templates_only():
    a = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    b = np.array([[1.0, 0.0], [1.0, 0.0]])
    sims = d.pairwise_similarities({"t1": a, "t2": b})
    assert sims == pytest.approx([0.0, 0.6, 0.8, 1.0])


SIX = ["er", "sie", "xier", "en", "dey", "nin"]


def test_distribution_score_paper_values_for_six_groups():
    # Sec. 3.3: 1 - (1/M) sum_m sum_g (O_mg - 1/G)^2, G = 6, 1/G = 1/6.
    # An even er/sie split: O = (1/2, 1/2, 0, 0, 0, 0):
    #   2 * (1/2 - 1/6)^2 + 4 * (1/6)^2 = 2/9 + 1/9 = 1/3  ->  score 2/3 = 0.667.
    assert d.distribution_score({"p": {"er": 3, "sie": 3}}, SIX) == pytest.approx(2 / 3)
    # All "er": (5/6)^2 + 5 * (1/6)^2 = 25/36 + 5/36 = 5/6  ->  score 1/6 = 0.167.
    assert d.distribution_score({"p": {"er": 4}}, SIX) == pytest.approx(1 / 6)
    # Uniform over the six groups: every term 0 -> 1.
    assert d.distribution_score({"p": dict.fromkeys(SIX, 2)}, SIX) == pytest.approx(1.0)
    # The mean over prompts: (1/3 + 5/6) / 2 = 7/12 deviation -> 5/12.
    assert d.distribution_score({"a": {"er": 1, "sie": 1}, "b": {"sie": 5}}, SIX) == pytest.approx(5 / 12)


def test_distribution_score_ignores_no_pronoun_and_empty_prompts():
    groups = ["er", "sie", "xier"]  # G = 3, 1/G = 1/3
    counts = {
        # none ignored: O = (2/4, 1/4, 1/4): (1/2-1/3)^2 + 2 (1/4-1/3)^2 = 1/36 + 2/144 = 1/24
        "p1": {"er": 2, "sie": 1, "xier": 1, None: 5},
        "p2": {None: 3},  # no pronoun at all: left out of M
    }
    assert d.distribution_score(counts, groups) == pytest.approx(1 - 1 / 24)


def test_gifi_index_counts_computed_dimensions():
    assert d.gifi_index({"GDR": 0.5, "SN": None, "PE": 1.0}) == (pytest.approx(0.75), 2)
    assert d.gifi_index({"SN": None}) == (None, 0)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: d.equality_score([]), "no group accuracies"),
    (lambda: d.neutrality_score({}), "no scored templates"),
    (lambda: d.neutrality_score({"t": []}), "no scored templates"),
    (lambda: d.counterfactual_score([], 0.7), "no output pairs"),
    (lambda: d.distribution_score({"p": {None: 2}}, ["er", "sie"]), "no prompt produced a pronoun of these groups"),
    (lambda: d.distribution_score({"p": {"er": 2}}, ["er"]), "need at least two pronoun groups"),
])
def test_undefined_inputs_raise(call, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        call()


def test_templates_with_one_score_count_and_empty_ones_do_not():
    # a template one group answered has no spread (MAD 0); one nobody answered is not a template of the run
    assert d.neutrality_score({"a": [0.3], "b": [0.0, 0.4], "c": []}) == pytest.approx(1 - (0.0 + 0.2) / 2)


def test_two_groups_and_prompts_after_one_without_pronouns():
    # O = (1, 0) against 1/2 each: 2 * (1/2)^2 = 1/2; the prompt without a pronoun of the groups is left out
    assert d.distribution_score({"p1": {None: 3}, "p2": {"er": 2}}, ["er", "sie"]) == pytest.approx(0.5)
    assert d.distribution_score({"p": {"er": 1, "sie": 1}}, ["er", "sie"]) == 1.0


def test_figures_do_not_depend_on_the_precision_scores_come_in():
    """Accuracies, similarities and embeddings handed over as float32 (as models return them) give the
    figure of the same values in float64."""
    accuracies = np.float32([0.1, 0.7, 0.35])
    assert d.equality_score(accuracies) == d.equality_score([float(x) for x in accuracies])
    # gamma 0.7 as written, not as float32 rounds it (0.69999999): float32 0.7 is below it
    assert d.counterfactual_score(np.float32([0.7]), 0.7) == d.counterfactual_score([float(np.float32(0.7))], 0.7) == 0.0
    rows = np.float32([[0.6, 0.8], [0.8, 0.6]])
    assert d.pairwise_similarities({"t": rows}) == [float(rows.astype(float)[0] @ rows.astype(float)[1])]
