"""Language-model view: does the model find the gender-fair reformulation as likely as the original?

Per instance and strategy, Δ = length-normalised log-likelihood of the reformulation
minus the original's: mean token log-probability for causal LMs, mean pseudo-log-
likelihood (`within_word_l2r`, Kauf & Ivanova 2023) for masked LMs. Beside it,
`delta_sum` compares the summed (sentence) log-likelihoods: the per-token mean
rewards predictable added tokens ("innen" after "*", the repeated noun of a
Doppelnennung), the sum penalises every added token, so the two bracket what drives
a preference. Texts equal to the original carry no information and are counted, not
compared; texts longer than the model's context are counted as too long rather than
truncated, since truncation would cut the original and its reformulation at
different places.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from queerbias.families import get_family
from queerbias.report.paired_stats import cell_rng
from queerbias.scoring.config import ScoringConfig
from queerbias.scoring.scorer import Scorer
from queerbias.suites.lou.analysis import added_tokens
from queerbias.suites.lou.data import POOLED, Instance
from queerbias.suites.lou.metrics import preference_summary

#: recorded in the run meta (and so in the run key): how the summary counts preferences
PREFERENCE = "Δ > 0 counts 100, a tie 50; per-token and summed log-likelihood"


def lm_scoring_config(kind: str) -> ScoringConfig:
    """Mean over every token; masked LMs use the within-word PLL that does not favour split words."""
    return ScoringConfig(scope="all", reduction="mean",
                         pll="original" if get_family(kind).left_to_right else "within_word_l2r")


def pair_key(original: str, reformulated: str) -> str:
    """Identifies the text pair itself, so runs can be aligned and duplicates across tasks found."""
    return hashlib.sha256(f"{original}\x00{reformulated}".encode()).hexdigest()[:16]


def score_chunk(scorer: Scorer, chunk: list[Instance], strategies: Sequence[str], limit: int | None,
                memo: dict[str, tuple[float, float]]) -> list[dict]:
    """One item row per instance and strategy; `memo` keeps each distinct text's (mean, summed)
    log-likelihood across chunks."""
    lengths = {}
    for instance in chunk:
        for text in (instance.original, *instance.reformulations.values()):
            lengths[text] = len(scorer.encode(text).ids)
    fits = {text: limit is None or n <= limit for text, n in lengths.items()}
    todo = [text for text, ok in fits.items() if ok and text not in memo]
    # the scorer keeps token log-probabilities, so the second reduction costs no forward pass
    memo.update(zip(todo, zip(scorer.sequence_score(todo, reduction="mean"),
                              scorer.sequence_score(todo, reduction="sum"), strict=True)))
    rows = []
    for instance in chunk:
        original = instance.original
        for strategy in strategies:
            text = instance.reformulations[strategy]
            identical = text == original
            too_long = not (fits[original] and fits[text])
            compared = not identical and not too_long
            (mean_o, sum_o), (mean_r, sum_r) = (memo[original], memo[text]) if compared else ((None,) * 2,) * 2
            rows.append({
                "task": instance.task, "index": instance.index, "label": instance.label, "strategy": strategy,
                "pair_key": pair_key(original, text), "identical": identical, "too_long": too_long,
                "tokens_original": lengths[original], "tokens_reformulated": lengths[text],
                "score_original": mean_o, "score_reformulated": mean_r,
                "delta": mean_r - mean_o if compared else None,
                "preferred": mean_r > mean_o if compared else None,
                "score_original_sum": sum_o, "score_reformulated_sum": sum_r,
                "delta_sum": sum_r - sum_o if compared else None,
            })
    return rows


def summarise(rows: Sequence[dict], tasks: Sequence[str], strategies: Sequence[str], seed: int = 0,
              n_resamples: int = 10_000) -> dict:
    """Per task and strategy, and pooled over tasks (each distinct text pair once); `added_tokens`:
    the tokens each strategy adds in this model's tokenizer (App. A.5, Table 6)."""
    by_task = {task: {s: _entry([r for r in rows if r["task"] == task and r["strategy"] == s], task, s,
                                seed, n_resamples)
                      for s in strategies}
               for task in tasks}
    pooled = {}
    for strategy in strategies:
        distinct = {r["pair_key"]: r for r in rows if r["strategy"] == strategy}
        pooled[strategy] = _entry(list(distinct.values()), POOLED, strategy, seed, n_resamples)
    added = added_tokens([(r["task"], r["strategy"], r["tokens_reformulated"] - r["tokens_original"]) for r in rows],
                         tasks, strategies)
    return {"tasks": by_task, POOLED: pooled, "added_tokens": added}


def _entry(rows: list[dict], scope: str, strategy: str, seed: int, n_resamples: int) -> dict:
    """Counts, the per-token view's figures at the top level, the summed view under `sentence`."""
    deltas = [r["delta"] for r in rows if r["delta"] is not None]
    sentence = [r["delta_sum"] for r in rows if r["delta_sum"] is not None]
    return {"n": len(rows), "n_identical": sum(r["identical"] for r in rows),
            "n_too_long": sum(r["too_long"] and not r["identical"] for r in rows), "n_compared": len(deltas),
            **preference_summary(deltas, cell_rng(seed, scope, strategy), n_resamples),
            "sentence": preference_summary(sentence, cell_rng(seed, scope, strategy, "sentence"), n_resamples)}
