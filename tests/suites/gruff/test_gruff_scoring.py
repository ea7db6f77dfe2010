"""Scoring semantics: the batched forced choice equals a direct per-option computation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from queerbias.errors import QueerbiasError
from queerbias.models import load_model
from queerbias.scoring.scorer import make_scorer
from queerbias.suites.gruff.generation import GenerationConfig, generate
from queerbias.suites.gruff.scoring import (
    answers,
    score_options,
    scoring_config,
    tokenizer_adds_bos,
)


@torch.inference_mode()
def naive_causal(lm, text: str) -> float:
    """The paper's decoder score: tokenizer(text) as is, mean log-prob of positions 1..L-1."""
    ids = lm.tokenizer(text, return_tensors="pt")["input_ids"]
    logprobs = torch.log_softmax(lm.model(ids).logits[0].float(), dim=-1)
    values = [logprobs[i - 1, ids[0, i]].item() for i in range(1, ids.shape[1])]
    return sum(values) / len(values)


@torch.inference_mode()
def naive_masked(lm, text: str) -> float:
    """PLL with within_word_l2r masking (Kauf & Ivanova 2023), one forward pass per token, mean."""
    encoded = lm.tokenizer(text)
    ids, words = encoded["input_ids"], encoded.word_ids()
    special = lm.tokenizer.get_special_tokens_mask(ids, already_has_special_tokens=True)
    values = []
    for p in (i for i, s in enumerate(special) if not s):
        masked = torch.tensor([ids])
        for q in range(p, len(ids)):
            if q == p or (words[p] is not None and words[q] == words[p]):
                masked[0, q] = lm.tokenizer.mask_token_id
        logprobs = torch.log_softmax(lm.model(masked).logits[0, p].float(), dim=-1)
        values.append(logprobs[ids[p]].item())
    return sum(values) / len(values)


def _items(templates):
    return generate(templates, GenerationConfig(settings=("none", "d0", "d1"), n=4, seed=1))


def _check(lm, items, naive, config=None):
    scorer = make_scorer(lm, config or scoring_config(lm), batch_size="auto")
    fast = score_options(scorer, items, progress=False, chunk=5)
    slow = np.array([[naive(lm, text) for text in item.texts()] for item in items])
    np.testing.assert_allclose(fast, slow, atol=1e-5, rtol=1e-5)
    chosen, tie = answers(fast)
    assert list(chosen) == list(slow.argmax(axis=1)) and not tie.any()


@pytest.mark.parametrize("fixture", ["tiny_gpt2", "tiny_llama"])
def test_causal_scores_equal_direct_computation(request, fixture, tiny_templates):
    lm = load_model(str(request.getfixturevalue(fixture)))
    assert not tokenizer_adds_bos(lm.tokenizer) and scoring_config(lm).bos == "none"
    _check(lm, _items(tiny_templates), naive_causal)


def test_bos_adding_tokenizer_is_scored_after_bos(tiny_llama, tiny_templates):
    from tokenizers.processors import TemplateProcessing

    lm = load_model(str(tiny_llama))
    bos = lm.tokenizer.bos_token
    lm.tokenizer.backend_tokenizer.post_processor = TemplateProcessing(
        single=f"{bos} $A", special_tokens=[(bos, lm.tokenizer.bos_token_id)])
    assert tokenizer_adds_bos(lm.tokenizer)
    assert scoring_config(lm).bos == "prepend"
    _check(lm, _items(tiny_templates), naive_causal)


def test_masked_pll_equals_direct_computation(tiny_bert, tiny_templates):
    lm = load_model(str(tiny_bert))
    assert scoring_config(lm).pll == "within_word_l2r"
    items = [item for item in _items(tiny_templates) if item.setting in ("none", "d1")]
    _check(lm, items[::3], naive_masked)  # one forward pass per token: keep it short


def test_texts_longer_than_the_model_are_refused(tiny_gpt2, tiny_templates):
    lm = load_model(str(tiny_gpt2))  # 128 positions; tiny byte-level BPE makes d3 texts longer
    items = generate(tiny_templates, GenerationConfig(settings=("d3",)))
    with pytest.raises(QueerbiasError, match="positions"):
        score_options(make_scorer(lm, scoring_config(lm)), items, progress=False)


def test_ties_go_to_the_first_option_and_are_flagged():
    chosen, tie = answers(np.array([[-1.0, -1.0, -2.0, -3.0], [-3.0, -2.0, -1.0, -0.5]]))
    assert list(chosen) == [0, 3] and list(tie) == [True, False]
