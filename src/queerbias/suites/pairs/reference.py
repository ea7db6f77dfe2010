"""The naive scorer: the reference scripts' loops, one forward pass per scored token.

This is the yardstick the fast scorer is tested and benchmarked against. It
tokenises, masks and conditions exactly as the WinoQueer/CrowS-Pairs scripts do
(batch size 1, full logits, a fresh forward pass per token) and shares nothing
with the fast path but the alignment rule and the word boundaries (`scoring.words`).
For a model with language embeddings (XLM) it passes `langs` itself: `lang`'s id at
every position, as XLM's own examples do.
"""

from __future__ import annotations

import torch

from queerbias.models.languages import language_ids
from queerbias.models.loading import LoadedModel
from queerbias.pairs.schema import Pair
from queerbias.scoring.config import ScoringConfig
from queerbias.scoring.words import word_ids
from queerbias.suites.pairs.alignment import scored_positions


def naive_sentence_pair(lm: LoadedModel, pair: Pair, config: ScoringConfig,
                        lang: str | None = None) -> tuple[float, float]:
    """(score of sent_more, score of sent_less) before rounding; `lang`: the language passed as
    `langs` to a model with language embeddings."""
    tokenizer = lm.tokenizer
    sent1, sent2 = pair.aligned_order
    if config.lowercase == "auto" and getattr(tokenizer, "do_lower_case", False):
        sent1, sent2 = sent1.lower(), sent2.lower()
    if lm.kind == "masked":
        enc1, enc2 = tokenizer(sent1), tokenizer(sent2)
    else:
        prefix = tokenizer.bos_token if config.bos == "prepend" else ""
        enc1 = tokenizer(prefix + sent1, add_special_tokens=False)
        enc2 = tokenizer(prefix + sent2, add_special_tokens=False)
    ids1, ids2 = enc1["input_ids"], enc2["input_ids"]
    scorable1, scorable2 = _scorable(lm, ids1), _scorable(lm, ids2)
    pos1, pos2 = scored_positions(ids1, ids2, lm.kind, config.scope, scorable1, scorable2)
    score = _masked_logprob if lm.kind == "masked" else _causal_logprob
    extra = {} if lang is None else {"lang": language_ids(lm.model.config)[lang]}
    values1 = [score(lm, ids1, word_ids(tokenizer, enc1, ids1), p, config, **extra) for p in pos1]
    values2 = [score(lm, ids2, word_ids(tokenizer, enc2, ids2), p, config, **extra) for p in pos2]
    s1, s2 = _reduce(values1, config), _reduce(values2, config)
    return (s2, s1) if pair.direction == "antistereo" else (s1, s2)


def _scorable(lm: LoadedModel, ids: list[int]) -> list[int]:
    if lm.kind == "masked":
        special = lm.tokenizer.get_special_tokens_mask(ids, already_has_special_tokens=True)
        return [i for i, s in enumerate(special) if not s]
    return list(range(1, len(ids)))


def _reduce(values: list[float], config: ScoringConfig) -> float:
    total = 0.0
    for value in values:
        total += value
    if config.reduction == "mean":
        return total / len(values) if values else 0.0
    return total


def _forward(lm: LoadedModel, ids: torch.Tensor, lang: int | None) -> torch.Tensor:
    return lm.model(ids).logits if lang is None else lm.model(ids, langs=torch.full_like(ids, lang)).logits


@torch.inference_mode()
def _masked_logprob(lm: LoadedModel, ids, words, position: int, config: ScoringConfig,
                    lang: int | None = None) -> float:
    masked = torch.tensor([ids], device=lm.device)
    masked[0, position] = lm.tokenizer.mask_token_id
    if config.pll == "within_word_l2r" and words[position] is not None:
        for q in range(position + 1, len(ids)):
            if words[q] == words[position]:
                masked[0, q] = lm.tokenizer.mask_token_id
    logits = _forward(lm, masked, lang)[0, position]
    return torch.log_softmax(logits.float(), dim=0)[ids[position]].item()


@torch.inference_mode()
def _causal_logprob(lm: LoadedModel, ids, words, position: int, config: ScoringConfig,
                    lang: int | None = None) -> float:
    prefix = torch.tensor([ids[:position]], device=lm.device)
    logits = _forward(lm, prefix, lang)[0, -1]
    return torch.log_softmax(logits.float(), dim=0)[ids[position]].item()
