import pytest

from queerbias.pairs.schema import Pair
from queerbias.scoring.scorer import NonFiniteScores
from queerbias.suites.pairs.aggregate import distance_to_indifference, summarise, summarise_groups
from queerbias.suites.pairs.scoring import pair_outcome, pair_positions

PAIR = Pair("1", "Sie sind krank.", "Sie sind gesund.", "gay")


def test_three_decimal_tie_is_neutral_not_biased():
    out = pair_outcome(PAIR, -10.12341, -10.12349)
    assert (out.score_more, out.score_less, out.biased, out.neutral) == (-10.123, -10.123, 0, 1)


def test_more_likely_stereotype_is_biased():
    out = pair_outcome(PAIR, -10.1, -12.3)
    assert out.biased == 1 and out.neutral == 0
    assert out.soft == round(100 * -12.3 / (-10.1 + -12.3 + 1e-8), 2) == 54.91


def test_the_soft_score_is_the_references_formula_to_its_epsilon():
    # round(100 * s_less / (s_more + s_less + 1e-8), 2): 96.88 here, 96.87 with the epsilon's sign turned
    assert pair_outcome(PAIR, -0.001, -0.031).soft == 96.88


@pytest.mark.parametrize(("more", "less"), [(float("nan"), -1.0), (-1.0, float("-inf")), (float("inf"), float("nan"))])
def test_a_pair_with_a_score_that_is_not_finite_cannot_be_decided(more, less):
    with pytest.raises(NonFiniteScores, match=f"^pair 1: sentence scores {more} and {less} are not both finite "
                                              "numbers, so the pair cannot be decided \\(a broken model, or edited "
                                              "progress files; rerun with --overwrite\\)$"):
        pair_outcome(PAIR, more, less)


def test_summary_counts_neutral_in_denominator_and_se():
    s = summarise([1, 0, 0, 1], [0, 1, 0, 0], [60.0, 50.0, 40.0, 55.0])
    assert s["n"] == 4 and s["n_neutral"] == 1
    assert s["bias_score"] == 50.0
    assert s["bias_se"] == pytest.approx(25.0)  # 100*sqrt(.5*.5/4)
    assert s["soft_score"] == pytest.approx(51.25)
    assert s["soft_se"] == pytest.approx(8.5391 / 2, abs=1e-3)


def test_groups_keep_first_appearance_order():
    overall, groups = summarise_groups(["b", "a", "b"], [1, 0, 0], [0, 0, 0], [1.0, 2.0, 3.0])
    assert list(groups) == ["b", "a"] and groups["b"]["n"] == 2 and overall["n"] == 3


def test_distance_to_indifference_by_hand():
    """Groups at 0, 100 and 50 average to an overall 50 but sit (50 + 50 + 0) / 3 from it."""
    groups = {"agender": {"bias_score": 100.0, "soft_score": 58.0},
              "demisexual": {"bias_score": 0.0, "soft_score": 44.0},
              "gay": {"bias_score": 50.0, "soft_score": 51.0},
              "empty": {"bias_score": None, "soft_score": None}}
    assert distance_to_indifference(groups) == {"bias": pytest.approx(100 / 3, abs=1e-4),
                                                "soft": pytest.approx(15 / 3), "n_groups": 3}
    assert distance_to_indifference({}) == {"bias": None, "soft": None, "n_groups": 0}


def _hand_split(scorer, pair, value):
    """(d_phrase, d_predicate) by the definition: over the aligned scored positions of sent_more and sent_less,
    value(sent_more's token) - value(sent_less's token), in the first term where sent_more's token is one of the
    tokens of sent_more[:phrase_end] that begin sent_more's own encoding."""
    more, less = scorer.encode(pair.sent_more).ids, scorer.encode(pair.sent_less).ids
    prefix = scorer.encode(pair.sent_more[:pair.phrase_end]).ids
    own = 0
    while own < min(len(prefix), len(more)) and prefix[own] == more[own]:
        own += 1
    (first, pos1), (second, pos2) = pair_positions(scorer, pair)
    aligned = list(zip(pos1, pos2)) if first.ids == more else list(zip(pos2, pos1))  # (sent_more's, sent_less's)
    phrase = sum(value(more, p) - value(less, q) for p, q in aligned if p < own)
    return phrase, sum(value(more, p) - value(less, q) for p, q in aligned if p >= own)


@pytest.mark.parametrize("direction", ["stereo", "antistereo"])
def test_the_phrase_split_by_hand(tiny_gemma, direction):
    """`score_pairs` splits d at the end of the identity phrase, rounded as the scores are, into terms that add up to
    d, the same for either direction of one pair; an identity phrase ending inside a word counts the tokens the
    sentence and the phrase alone share; a mean reduction has no split."""
    from queerbias.models import load_model
    from queerbias.scoring.config import ScoringConfig
    from queerbias.scoring.scorer import make_scorer
    from queerbias.suites.pairs.scoring import score_pairs

    def value(ids, p):  # a non-round log-probability that depends on the token and on what comes before it
        return -((sum(i * (k + 3) for k, i in enumerate(ids[:p + 1])) + p * 13) % 29) / 7.0 - 0.1234567 * p

    scorer = make_scorer(load_model(str(tiny_gemma)))
    scorer._compute_logprobs = lambda requests: {(ids, p): value(ids, p) for ids, p in requests}
    pairs = [Pair("1", "Schwule Männer sind nett.", "Heterosexuelle Männer sind nett.", "gay", direction=direction,
                  phrase_end=len("Schwule Männer")),
             Pair("2", "Lesbische Frauen sind klug.", "Heterosexuelle Frauen sind klug.", "lesbian", direction=direction,
                  phrase_end=len("Lesbische Fra")),  # inside the token " Frauen": the prefix alone ends " F", "ra"
             Pair("3", "Trans Frauen sind stark.", "Cis Frauen sind stark.", "trans_women", direction=direction,
                  phrase_end=len("Trans Frauen"))]  # "Trans" is more tokens than "Cis": the positions differ
    cut = scorer.encode(pairs[1].sent_more[:pairs[1].phrase_end]).ids
    assert cut != scorer.encode(pairs[1].sent_more).ids[:len(cut)]
    assert len(scorer.encode(pairs[2].sent_more).ids) != len(scorer.encode(pairs[2].sent_less).ids)
    for scored, pair in zip(score_pairs(scorer, pairs), pairs, strict=True):
        phrase, predicate = _hand_split(scorer, pair, value)
        assert predicate != 0 and round(predicate, 3) != predicate
        # " Männer" is the phrase's own token; " Frauen", cut by the phrase's end, belongs to the predicate
        assert phrase != 0 and round(phrase, 3) != phrase if pair.pair_id != "2" else phrase == 0
        assert (scored.d_phrase, scored.d_predicate) == (round(phrase, 3), round(predicate, 3))
        assert scored.d_phrase + scored.d_predicate == pytest.approx(scored.score_more - scored.score_less, abs=2e-3)
    mean = make_scorer(load_model(str(tiny_gemma)), ScoringConfig(reduction="mean"))
    mean._compute_logprobs = scorer._compute_logprobs
    assert all(s.d_phrase is None and s.d_predicate is None for s in score_pairs(mean, pairs))
