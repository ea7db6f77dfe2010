"""Forced choice among the four pronouns of a gap, scored as the paper scores it.

Causal LMs: mean log-probability of the text's tokens after the tokenizer's own
special prefix (the upstream script runs `tokenizer(text)` and skips position 0:
with a BOS-adding tokenizer such as Gemma's or Llama's that scores every text token
after BOS, with GPT-2's it skips the first text token). `bos="auto"` reproduces
this per tokenizer. Masked LMs: pseudo-log-likelihood with `within_word_l2r`
masking (minicons' PLL_metric), averaged over tokens. The highest-scoring option
is the answer; exact ties go to the first option in PRONOUN_SETS order and are
flagged.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from tqdm.auto import tqdm

from queerbias.errors import QueerbiasError
from queerbias.families import get_family
from queerbias.models.context import context_length
from queerbias.models.loading import LoadedModel
from queerbias.scoring.config import ScoringConfig
from queerbias.scoring.scorer import Scorer
from queerbias.suites.gruff.forms import PRONOUN_SETS
from queerbias.suites.gruff.generation import Instance

BOS_CHOICES = ("auto", "prepend", "none")
METHOD = ("forced choice among the four pronouns of the gap; causal: mean token log-probability of the "
          "whole text, masked: mean within_word_l2r pseudo-log-likelihood")
CHUNK_ITEMS = 1024  # instances per scorer call (x4 texts); one progress step each


def tokenizer_adds_bos(tokenizer) -> bool:
    """Whether the tokenizer, called plainly, starts the ids with its BOS token."""
    bos = tokenizer.bos_token_id
    ids = tokenizer("Test")["input_ids"]
    return bos is not None and len(ids) > 0 and ids[0] == bos


def scoring_config(lm: LoadedModel, bos: str = "auto") -> ScoringConfig:
    """The scorer settings of the GRUFF method for this model."""
    if bos not in BOS_CHOICES:
        raise QueerbiasError(f"bos must be one of {BOS_CHOICES}, got {bos!r}")
    if not get_family(lm.kind).left_to_right:  # a pseudo-log-likelihood: within-word masking
        return ScoringConfig(reduction="mean", pll="within_word_l2r")
    if bos == "auto":
        bos = "prepend" if tokenizer_adds_bos(lm.tokenizer) else "none"
    return ScoringConfig(reduction="mean", bos=bos)


def score_options(scorer: Scorer, items: Sequence[Instance], progress: bool = True,
                  chunk: int = CHUNK_ITEMS) -> np.ndarray:
    """(items, pronoun sets) scores: every option text of a chunk goes through one scorer call."""
    width = len(PRONOUN_SETS)
    scores = np.empty((len(items), width))
    with tqdm(total=len(items), unit="item", desc="gruff", disable=not progress, dynamic_ncols=True) as bar:
        for start in range(0, len(items), chunk):
            part = items[start:start + chunk]
            texts = [text for item in part for text in item.texts()]
            _check_length(scorer, texts)
            values = scorer.sequence_score(texts, reduction="mean")
            scores[start:start + len(part)] = np.asarray(values).reshape(len(part), width)
            bar.update(len(part))
    return scores


def _check_length(scorer: Scorer, texts: list[str]) -> None:
    """Refuse texts longer than the model's positions (d4/d5 contexts are long) with a clear error."""
    limit = context_length(scorer.model)
    longest = max(len(scorer.encode(text).ids) for text in texts)
    if limit and longest > limit:
        raise QueerbiasError(f"a GRUFF text has {longest} tokens, more than the {limit} positions of "
                             f"{scorer.lm.spec}; leave out the settings with most distractor sentences")


def answers(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of the chosen option per row, and whether the maximum was shared."""
    best = scores.max(axis=1, keepdims=True)
    return scores.argmax(axis=1), (scores == best).sum(axis=1) > 1


def item_rows(items: Sequence[Instance], scores: np.ndarray) -> list[dict]:
    """One row per instance: what it is, its gold text, the options' scores and the answer."""
    chosen, tie = answers(scores)
    rows = []
    for item, row_scores, pick, tied in zip(items, scores, chosen, tie, strict=True):
        answer = PRONOUN_SETS[pick]
        rows.append({
            "replicate": item.replicate, "item_id": item.item_id, "setting": item.setting,
            "n_distractors": item.n_distractors, "occupation": item.occupation, "participant": item.participant,
            "case": item.case, "system": item.system, "target": item.target,
            "distractor_system": item.distractor_system, "distractor": item.distractor,
            "text": item.texts()[item.gold],
            **{f"score_{p}": float(v) for p, v in zip(PRONOUN_SETS, row_scores, strict=True)},
            "answer": answer, "correct": answer in item.accepted,
            "distractor_error": item.distractor is not None and answer == item.distractor, "tie": bool(tied)})
    return rows
