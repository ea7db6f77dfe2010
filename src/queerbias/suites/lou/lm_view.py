"""Language-model view: does the model find the gender-fair reformulation as likely as the original?

Per instance and strategy, Δ = length-normalised log-likelihood of the reformulation
minus the original's: mean token log-probability for causal LMs, mean pseudo-log-
likelihood (`within_word_l2r`, Kauf & Ivanova 2023) for masked LMs. Texts equal to
the original carry no information and are counted, not compared; texts longer than
the model's context are counted as too long rather than truncated, since truncation
would cut the original and its reformulation at different places.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from queerbias.models.loading import MASKED
from queerbias.report.paired_stats import cell_rng
from queerbias.scoring.config import ScoringConfig
from queerbias.scoring.scorer import Scorer
from queerbias.suites.lou.data import Instance
from queerbias.suites.lou.metrics import preference_summary

POOLED = "all"


def lm_scoring_config(kind: str) -> ScoringConfig:
    """Mean over every token; masked LMs use the within-word PLL that does not favour split words."""
    return ScoringConfig(scope="all", reduction="mean", pll="within_word_l2r" if kind == MASKED else "original")


def pair_key(original: str, reformulated: str) -> str:
    """Identifies the text pair itself, so runs can be aligned and duplicates across tasks found."""
    return hashlib.sha256(f"{original}\x00{reformulated}".encode()).hexdigest()[:16]


def score_chunk(scorer: Scorer, chunk: list[Instance], strategies: Sequence[str], limit: int | None,
                 memo: dict[str, float]) -> list[dict]:
    """One item row per instance and strategy; `memo` keeps each distinct text's score across chunks."""
    lengths = {}
    for instance in chunk:
        for text in (instance.original, *instance.reformulations.values()):
            lengths[text] = len(scorer.encode(text).ids)
    fits = {text: limit is None or n <= limit for text, n in lengths.items()}
    todo = [text for text, ok in fits.items() if ok and text not in memo]
    memo.update(zip(todo, scorer.sequence_score(todo, reduction="mean")))
    rows = []
    for instance in chunk:
        original = instance.original
        for strategy in strategies:
            text = instance.reformulations[strategy]
            identical = text == original
            too_long = not (fits[original] and fits[text])
            compared = not identical and not too_long
            delta = memo[text] - memo[original] if compared else None
            rows.append({
                "task": instance.task, "index": instance.index, "label": instance.label, "strategy": strategy,
                "pair_key": pair_key(original, text), "identical": identical, "too_long": too_long,
                "tokens_original": lengths[original], "tokens_reformulated": lengths[text],
                "score_original": memo.get(original) if compared else None,
                "score_reformulated": memo.get(text) if compared else None,
                "delta": delta, "preferred": None if delta is None else delta > 0,
            })
    return rows


def summarise(rows: Sequence[dict], tasks: Sequence[str], strategies: Sequence[str], seed: int = 0,
              n_resamples: int = 10_000) -> dict:
    """Per task and strategy, and pooled over tasks (each distinct text pair once)."""
    by_task = {task: {s: _entry([r for r in rows if r["task"] == task and r["strategy"] == s], task, s,
                                seed, n_resamples)
                      for s in strategies}
               for task in tasks}
    pooled = {}
    for strategy in strategies:
        distinct = {r["pair_key"]: r for r in rows if r["strategy"] == strategy}
        pooled[strategy] = _entry(list(distinct.values()), POOLED, strategy, seed, n_resamples)
    return {"tasks": by_task, POOLED: pooled}


def _entry(rows: list[dict], scope: str, strategy: str, seed: int, n_resamples: int) -> dict:
    deltas = [r["delta"] for r in rows if r["delta"] is not None]
    rng = cell_rng(seed, scope, strategy)
    return {"n": len(rows), "n_identical": sum(r["identical"] for r in rows),
            "n_too_long": sum(r["too_long"] and not r["identical"] for r in rows), "n_compared": len(deltas),
            **preference_summary(deltas, rng, n_resamples)}
