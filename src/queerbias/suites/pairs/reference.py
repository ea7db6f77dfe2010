"""The naive scorer: the reference scripts' loops, one forward pass per scored token.

This is the yardstick the fast scorer is tested and benchmarked against. It masks and
conditions exactly as the WinoQueer/CrowS-Pairs scripts do (batch size 1, full logits, a fresh
forward pass per token: `Family.reference_logprob`) and shares nothing with the fast path but the
family's tokenisation (`Family.encode`, the reference's own), the alignment rule and the word
boundaries (`scoring.words`). For a model with language embeddings (XLM) it passes `langs` itself:
`lang`'s id at every position, as XLM's own examples do.
"""

from __future__ import annotations

from queerbias.families import get_family
from queerbias.models.languages import language_ids
from queerbias.models.loading import LoadedModel
from queerbias.pairs.schema import Pair
from queerbias.scoring.config import ScoringConfig
from queerbias.suites.pairs.alignment import scored_positions


def naive_sentence_pair(lm: LoadedModel, pair: Pair, config: ScoringConfig,
                        lang: str | None = None) -> tuple[float, float]:
    """(score of sent_more, score of sent_less) before rounding; `lang`: the language passed as
    `langs` to a model with language embeddings."""
    family, tokenizer = get_family(lm.kind), lm.tokenizer
    sent1, sent2 = pair.aligned_order
    if config.lowercase == "auto" and getattr(tokenizer, "do_lower_case", False):
        sent1, sent2 = sent1.lower(), sent2.lower()
    enc1, enc2 = family.encode(tokenizer, config, sent1, None), family.encode(tokenizer, config, sent2, None)
    pos1, pos2 = scored_positions(enc1.ids, enc2.ids, lm.kind, config.scope, enc1.scorable, enc2.scorable)
    extra = {} if lang is None else {"lang": language_ids(lm.model.config)[lang]}
    values1 = [family.reference_logprob(lm, list(enc1.ids), enc1.word_ids, p, config, **extra) for p in pos1]
    values2 = [family.reference_logprob(lm, list(enc2.ids), enc2.word_ids, p, config, **extra) for p in pos2]
    s1, s2 = _reduce(values1, config), _reduce(values2, config)
    return (s2, s1) if pair.direction == "antistereo" else (s1, s2)


def _reduce(values: list[float], config: ScoringConfig) -> float:
    total = 0.0
    for value in values:
        total += value
    if config.reduction == "mean":
        return total / len(values) if values else 0.0
    return total
