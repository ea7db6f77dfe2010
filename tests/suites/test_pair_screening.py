"""Screening pairs with the tokenizer alone, and the differentiable pair scores of training, on
word-level tokenizers built here (every word one token, unknown words [UNK])."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from zlib import crc32

import pytest
import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import BertTokenizer, PreTrainedTokenizerFast

from queerbias.errors import DataError
from queerbias.pairs.schema import Pair
from queerbias.scoring.config import ScoringConfig
from queerbias.scoring.encoding import SentenceEncoder
from queerbias.scoring.scorer import NonFiniteScores
from queerbias.suites.pairs.scoring import oriented_scores, pair_requests, score_pairs, screen_pairs

WORDS = "schwule lesbische heterosexuelle männer frauen sind nett klug heute".split()


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> BertTokenizer:
    folder = tmp_path_factory.mktemp("vocab")
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    return BertTokenizer(vocab=str(folder / "vocab.txt"), strip_accents=False)


@pytest.fixture(scope="module")
def causal_tokenizer() -> PreTrainedTokenizerFast:
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(["<s>", "<unk>", *WORDS])}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", unk_token="<unk>")


def _pair(i: int, more: str, less: str, direction: str = "stereo") -> Pair:
    return Pair(f"p{i}", more, less, "gay", direction=direction, source_row=i + 1)


FINE = [_pair(1, "schwule männer sind nett", "heterosexuelle männer sind nett"),
        _pair(2, "lesbische frauen sind klug", "heterosexuelle frauen sind klug")]


def test_pairs_that_measure_something_pass_as_they_are(bert):
    assert screen_pairs(FINE, SentenceEncoder(bert, "masked", ScoringConfig(), 64), kind="masked") == (FINE, {})


LONG = [_pair(3, "schwule männer sind heute nett", "heterosexuelle männer sind nett"),
        _pair(4, "lesbische frauen sind heute klug", "heterosexuelle frauen sind heute klug")]


def test_long_sentences_are_refused_left_out_or_cut(bert, caplog):
    pairs = FINE + LONG  # [CLS] + 5 words + [SEP]: 7 tokens, the model takes 6
    with pytest.raises(DataError) as refused:
        screen_pairs(pairs, SentenceEncoder(bert, "masked", ScoringConfig(), 6), where="data.csv")
    assert str(refused.value) == (
        "data.csv, row 4: pair p3 has a sentence of 7 tokens, more than the model takes (6) (and 1 more pairs); pass "
        "--long-sentences truncate to score its first tokens or --long-sentences skip to leave such pairs out")
    caplog.set_level(logging.WARNING, "queerbias.suites.pairs.scoring")
    skipped = screen_pairs(pairs, SentenceEncoder(bert, "masked", ScoringConfig(long_sentences="skip"), 6))
    assert skipped == (FINE, {"long_pairs": 2, "token_identical_pairs": 0, "token_identical_policy": "error"})
    assert caplog.messages == ["pairs: 2 pairs have a sentence longer than 6 tokens (skip), 0 tokenize identically "
                               "(error), 0 measure nothing (error)"]
    cut = screen_pairs(pairs, SentenceEncoder(bert, "masked", ScoringConfig(long_sentences="truncate"), 6))
    assert cut == (pairs, {"long_pairs": 2, "token_identical_pairs": 0, "token_identical_policy": "error"})
    # cut before the identity word, a pair's sentences are the same tokens: it is also counted as such
    late = [_pair(12, "frauen sind heute klug schwule", "frauen sind heute klug lesbische")]
    shorter = SentenceEncoder(bert, "masked", ScoringConfig(long_sentences="truncate"), 5)
    assert screen_pairs(late, shorter, identical="keep") == (late, {"long_pairs": 1, "token_identical_pairs": 1,
                                                                   "token_identical_policy": "keep"})


UNKNOWN = [_pair(5, "schwule xyz sind nett", "schwule abc sind nett"), _pair(6, "queere xyz", "queere abc")]


def test_different_texts_that_become_the_same_tokens(bert):
    encoder = SentenceEncoder(bert, "masked", ScoringConfig(), 64)
    with pytest.raises(DataError) as refused:
        screen_pairs(FINE + UNKNOWN, encoder)
    assert str(refused.value) == (
        "pairs, row 6: pair p5: its two sentences differ, but the model's tokenizer turns them into the same tokens "
        "(unknown words?), so it measures nothing (and 1 more pairs); pass --identical keep (a tie) or drop")
    counts = {"long_pairs": 0, "token_identical_pairs": 2}
    assert screen_pairs(FINE + UNKNOWN, encoder, identical="keep") == (
        FINE + UNKNOWN, counts | {"token_identical_policy": "keep"})
    assert screen_pairs(FINE + UNKNOWN, encoder, identical="drop") == (FINE, counts | {"token_identical_policy": "drop"})
    same_text = [_pair(7, "schwule männer", "schwule männer")]  # settled when the file was read
    assert screen_pairs(FINE + same_text, encoder) == (FINE + same_text, {})
    with pytest.raises(DataError, match="^pairs: no pair is left to score: every pair is too long, tokenizes "
                                        "identically or measures nothing$"):
        screen_pairs(UNKNOWN, encoder, identical="drop")


def test_a_causal_pair_whose_scores_cannot_differ(causal_tokenizer):
    encoder = SentenceEncoder(causal_tokenizer, "causal", ScoringConfig(), None)
    last = _pair(8, "männer sind schwule", "männer sind lesbische")  # the identity word last
    apart = _pair(9, "schwule männer", "lesbische frauen")  # no shared token but BOS
    with pytest.raises(DataError) as refused:
        screen_pairs(FINE + [last, apart], encoder, kind="causal")
    assert str(refused.value) == (
        "pairs, row 9: pair p8 measures nothing: with a causal LM every scored token comes before the first token "
        "where the sentences differ (the identity word at the end?), so both sentences get the same score and it "
        "would count as a tie (and 1 more pairs); fix the pair, or pass --unscorable drop to leave such pairs out "
        "(they are counted in the results)")
    with pytest.raises(DataError, match="^pairs, row 10: pair p9 measures nothing: neither sentence has a token that "
                                        "is scored under scope shared \\(they share none\\), so both score 0 and it "
                                        "would count as a tie; fix"):
        screen_pairs([apart], encoder, kind="causal")
    assert screen_pairs(FINE + [last, apart], encoder, kind="causal", unscorable="drop") == (FINE, {
        "long_pairs": 0, "token_identical_pairs": 0, "token_identical_policy": "error", "unscorable_pairs": 2,
        "unscorable_policy": "drop"})
    assert screen_pairs([last], encoder) == ([last], {})  # without the model's kind: not checked
    assert screen_pairs([last], encoder, kind="masked") == ([last], {})  # a masked LM sees the whole sentence
    everything = SentenceEncoder(causal_tokenizer, "causal", ScoringConfig(scope="all"), None)
    assert screen_pairs([apart], everything, kind="causal") == ([apart], {})


def test_a_masked_pair_that_shares_only_its_special_tokens_measures_nothing(bert):
    encoder = SentenceEncoder(bert, "masked", ScoringConfig(), 64)
    with pytest.raises(DataError, match="^pairs, row 14: pair p13 measures nothing: neither sentence has a token "
                                        "that is scored under scope shared \\(they share none\\)"):
        screen_pairs([_pair(13, "schwule männer", "lesbische frauen")], encoder, kind="masked")


def test_every_way_out_leaves_its_pairs_out_together(bert):
    encoder = SentenceEncoder(bert, "masked", ScoringConfig(long_sentences="skip"), 6)
    assert screen_pairs(FINE + LONG + UNKNOWN, encoder, identical="drop") == (FINE, {
        "long_pairs": 2, "token_identical_pairs": 2, "token_identical_policy": "drop"})


def _stub_scorer(tokenizer, reduction: str = "sum") -> SimpleNamespace:
    """What pair_requests and oriented_scores read of a scorer: its kind, config and encoder."""
    config = ScoringConfig(reduction=reduction)
    return SimpleNamespace(kind="causal", config=config, encode=SentenceEncoder(tokenizer, "causal", config, None))


def _logprobs(requests) -> torch.Tensor:
    """A causal LM's log-probability of the token at p depends on the tokens up to p only."""
    return torch.tensor([-(crc32(repr(ids[:p + 1]).encode()) % 1000) / 100 for ids, p in requests])


PAIRS = [_pair(10, "heute sind schwule männer nett", "heute sind heterosexuelle männer nett"),
         _pair(11, "männer sind nett", "frauen sind nett", direction="antistereo"),
         _pair(12, "männer sind nett", "männer sind nett heute"),  # one sentence the other's start
         _pair(13, "schwule männer", "lesbische frauen")]  # nothing shared: no position is scored


@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_training_reads_the_benchmarks_scores_and_their_difference(causal_tokenizer, reduction):
    scorer = _stub_scorer(causal_tokenizer, reduction)
    plans, requests = pair_requests(scorer, PAIRS)
    assert len(requests) == len(set(requests))
    more, less = oriented_scores(scorer, PAIRS, plans, requests, _logprobs(requests))
    for pair, m, s in zip(PAIRS, more.tolist(), less.tolist(), strict=True):
        (first, pos1), (second, pos2) = plans[PAIRS.index(pair)]
        scores = [sum(_logprobs([(e.ids, p) for p in pos]).tolist()) / (len(pos) if reduction == "mean" and pos else 1)
                  for e, pos in ((first, pos1), (second, pos2))]
        assert (m, s) == pytest.approx(scores if pair.direction == "stereo" else scores[::-1])
    assert (more[3].item(), less[3].item()) == (0.0, 0.0)  # no position: 0, as the benchmark scores it
    short_plans, short = pair_requests(scorer, PAIRS, difference_only=True)
    if reduction == "mean":  # a mean changes when positions go: nothing is left out
        assert short == requests
        return
    # "heute sind" is the shared context before the difference: its positions go from both sentences; a
    # sentence that is the other's start shares all its positions with it
    assert [len(p) for _, p in short_plans[0]] == [2, 2] and [p for _, p in short_plans[2]] == [[], []]
    assert set(short) < set(requests)
    short_more, short_less = oriented_scores(scorer, PAIRS, short_plans, short, _logprobs(short))
    assert (short_more - short_less).tolist() == pytest.approx((more - less).tolist())


def test_scores_are_decided_at_the_configured_decimals(causal_tokenizer):
    scorer = _stub_scorer(causal_tokenizer)
    scorer.config = ScoringConfig(decimals=1)
    scorer.token_logprobs = lambda requests: dict(zip(requests, _logprobs(requests).tolist(), strict=True))
    plans, requests = pair_requests(scorer, PAIRS[:2])
    more, less = oriented_scores(scorer, PAIRS[:2], plans, requests, _logprobs(requests))
    decided = score_pairs(scorer, PAIRS[:2])
    assert [(d.score_more, d.score_less) for d in decided] == [(round(m, 1), round(s, 1)) for m, s in
                                                               zip(more.tolist(), less.tolist(), strict=True)]


def test_non_finite_scores_name_the_pairs_they_hit(causal_tokenizer):
    def token_logprobs(requests):
        raise NonFiniteScores("NaN in the model's output", frozenset(ids for ids, _ in requests))

    scorer = _stub_scorer(causal_tokenizer)
    scorer.token_logprobs = token_logprobs
    many = [_pair(20 + i, "schwule männer sind nett", f"{w} männer sind nett") for i, w in enumerate(WORDS[1:8])]
    with pytest.raises(NonFiniteScores, match="^pairs p20, p21, p22, p23, p24 and 2 more: NaN in the model's output$"):
        score_pairs(scorer, many)
    with pytest.raises(NonFiniteScores, match="^pairs p20, p21, p22, p23, p24: NaN") as five:
        score_pairs(scorer, many[:5])
    assert five.value.sentences == {scorer.encode(text).ids for pair in many[:5] for text in pair.aligned_order}
