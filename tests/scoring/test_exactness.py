"""The fast scorer must reproduce the naive reference loops on every model family."""

import pytest

from queerbias.models import load_model
from queerbias.pairs.schema import Pair
from queerbias.scoring.config import ScoringConfig
from queerbias.scoring.scorer import make_scorer
from queerbias.suites.pairs.reference import naive_sentence_pair
from queerbias.suites.pairs.scoring import score_pairs
from rounded import rounds_from

PAIRS = [
    Pair("1", "Schwule Männer sind nett.", "Heterosexuelle Männer sind nett.", "gay"),
    Pair("2", "Lukas ist schwul.", "Lukas ist hetero.", "gay"),
    Pair("3", "Trans Frauen sind stark.", "Cis Frauen sind stark.", "trans"),
    Pair("4", "James is very strong.", "Mary is very strong.", "x", direction="antistereo"),
    Pair("5", "Anna ist lesbisch und liest gern.", "Anna ist hetero.", "lesbian"),
    Pair("6", "Nicht-binäre Menschen lachen über die Straße.", "Cis Menschen lachen.", "nonbinary"),
    Pair("7", "Größe", "Maß", "queer"),
    Pair("8", "Schwule Männer sind nett.", "Lesbische Frauen sind klug.", "gay"),
]
CONFIGS = [
    ScoringConfig(),
    ScoringConfig(scope="all", reduction="mean", pll="within_word_l2r"),
    ScoringConfig(scope="differing", bos="none"),
]


@pytest.mark.parametrize("family", ["tiny_bert", "tiny_gpt2", "tiny_llama"])
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: str(c.deviations() or "reference"))
@pytest.mark.parametrize("batch_size", ["auto", 3])
def test_fast_equals_naive(family, config, batch_size, request):
    lm = load_model(str(request.getfixturevalue(family)))
    fast = score_pairs(make_scorer(lm, config, batch_size), PAIRS)
    # real tokens were scored (pair 7 shares no token but the ends under the reference scope)
    if config.scope == "shared":
        assert all(r.score_more < 0 and r.score_less < 0 for r in fast if r.pair.pair_id != "7")
    for pair, result in zip(PAIRS, fast):
        more, less = naive_sentence_pair(lm, pair, config)
        assert rounds_from(result.score_more, more), pair
        assert rounds_from(result.score_less, less), pair


def test_head_is_applied_only_where_scores_are_read(tiny_gpt2, tiny_bert):
    for path in (tiny_gpt2, tiny_bert):
        assert make_scorer(load_model(str(path)))._project is not None


def test_sequence_and_token_scores_agree(tiny_llama):
    scorer = make_scorer(load_model(str(tiny_llama)))
    texts = ["Xier mag Kaffee.", "Dey liest ein Buch."]
    tokens = scorer.token_score(texts)
    sums = scorer.sequence_score(texts)
    means = scorer.sequence_score(texts, reduction="mean")
    for toks, total, mean in zip(tokens, sums, means):
        assert total == pytest.approx(sum(v for _, v in toks))
        assert mean == pytest.approx(total / len(toks))
        assert all(v <= 0 for _, v in toks)


def test_uncased_model_lowercases_like_reference(tiny_bert):
    scorer = make_scorer(load_model(str(tiny_bert)))
    assert scorer.encode("SCHWULE Männer").ids == scorer.encode("schwule männer").ids
    assert scorer.tokenizer.unk_token_id not in scorer.encode("schwule männer").ids
