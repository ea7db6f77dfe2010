"""The real embedded model: Gemma 3 270M from the PyPI GGUF packages (slow: ~1 min first time)."""

import math

import pytest

from queerbias.pairs.resolve import load_pairs
from queerbias.pairs.sampling import sample_pairs
from queerbias.scoring.config import ScoringConfig
from queerbias.scoring.scorer import make_scorer
from queerbias.suites.pairs.reference import naive_sentence_pair
from queerbias.suites.pairs.scoring import score_pairs
from rounded import rounds_from

pytestmark = pytest.mark.slow


def test_loads_as_causal_with_bos_and_right_padding(embedded_gemma):
    assert embedded_gemma.kind == "causal"
    assert embedded_gemma.tokenizer.padding_side == "right"
    scorer = make_scorer(embedded_gemma)
    ids = scorer.encode("Schwule Männer sind nett.").ids
    assert ids[0] == embedded_gemma.tokenizer.bos_token_id and ids.count(embedded_gemma.tokenizer.bos_token_id) == 1
    assert scorer._project is not None  # LM head applied only at scored positions


def test_weights_are_pretrained_not_random(embedded_gemma):
    scorer = make_scorer(embedded_gemma)
    natural, scrambled = scorer.sequence_score(
        ["Die Kinder spielen am Nachmittag im Garten.", "Garten Nachmittag die im spielen Kinder am."],
        reduction="mean")
    assert natural > -6.0  # a random 262k-vocabulary model sits near -log(262144) = -12.5
    assert natural > scrambled + 1.0
    assert -math.log(len(embedded_gemma.tokenizer)) < natural


def test_fast_equals_naive_on_real_german_pairs(embedded_gemma):
    # the naive loop runs the 270M model once per scored token: 3 pairs (an acronym identity, the longest
    # sentence of the sample, a two-word identity) check each position's score as 6 did, at half the cost
    pairs = sample_pairs(load_pairs("queerbias-de"), 6, seed=4).pairs[:3]
    config = ScoringConfig()
    for pair, fast in zip(pairs, score_pairs(make_scorer(embedded_gemma, config), pairs)):
        more, less = naive_sentence_pair(embedded_gemma, pair, config)
        assert rounds_from(fast.score_more, more, noise=2e-4) and rounds_from(fast.score_less, less, noise=2e-4), \
            (pair, fast, more, less)
