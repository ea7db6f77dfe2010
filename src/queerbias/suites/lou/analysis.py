"""How reformulations change instances and predictions (Waldis et al. 2024, Sec. 5 iv, Sec. 6 ii, App. A.5).

Pure functions on the item rows of a classifier-view run (one row per instance and text
version) and, for the token counts, the LM view's rows too:

- `property_changes` (Sec. 6 ii, Table 3): per (instance, strategy) pair, the change
  reformulated − original of the normalised Flesch score and length, the prediction
  certainty and the prediction token's maximal attention and its SD over tokens (on the
  tokens the reformulation left unchanged), overall and split by whether the prediction
  flipped and whether the reformulation's prediction is correct. Flesch and length are
  min-max normalised per task over all its texts (originals and reformulations), as the
  paper does "for each task independently"; every property is on 0-100 like the paper's
  tables (certainty and attention: percentage points of probability). Each cell has its
  mean change, n, and the p-value of a Wilcoxon signed-rank test (the paper reports
  "stat. sig. at p < 0.05" without naming the test). Identical texts are left out: nothing
  was reformulated.
- `added_tokens` (App. A.5, Table 6): the mean number of tokens a strategy adds, per task,
  averaged over tasks, and over strategies (the table's "Average").
- `f1_flip_correlation` (Sec. 5 iv): Spearman's ρ between ΔF1 and the flip rate over the
  (task, strategy) cells; the paper's ρ = 0.47 is over its strategies, model types and tasks.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from queerbias.report.paired_stats import spearman, wilcoxon_signed_rank
from queerbias.suites.lou.data import ORIGINAL

POOLED = "all"  # = lm_view.POOLED, the scope pooled over tasks
PROPERTIES = {"flesch": "Norm. Flesch", "length": "Norm. Length", "certainty": "Prediction Certainty",
              "attention_max": "Attention Max", "attention_sd": "Attention Variation"}
SPLITS = {"overall": "Overall", "flip_no": "Flip: no", "flip_yes": "Flip: yes", "correct_no": "Correct: no",
          "correct_yes": "Correct: yes"}


def normalise(values: Sequence[float | None]) -> list[float | None]:
    """Min-max scaling to 0-100 (None stays None; all equal: None, as the scale is undefined)."""
    known = [v for v in values if v is not None]
    if not known or max(known) == min(known):
        return [None] * len(values)
    low, span = min(known), max(known) - min(known)
    return [None if v is None else 100.0 * (v - low) / span for v in values]


def property_pairs(rows: Sequence[dict], task: str) -> list[dict]:
    """Per non-identical (instance, strategy) of `task`: its split flags and each property before
    (original) and after (reformulation), on 0-100; a property the rows lack is None."""
    rows = [r for r in rows if r["task"] == task]
    flesch = dict(zip(map(id, rows), normalise([r.get("flesch") for r in rows]), strict=True))
    length = dict(zip(map(id, rows), normalise([r.get("words") for r in rows]), strict=True))
    originals = {r["index"]: r for r in rows if r["strategy"] == ORIGINAL}
    pairs = []
    for row in rows:
        if row["strategy"] == ORIGINAL or row["identical"]:
            continue
        base = originals[row["index"]]
        pairs.append({
            "flip": bool(row["flipped"]), "correct": row["pred"] == row["label"],
            "flesch": (flesch[id(base)], flesch[id(row)]), "length": (length[id(base)], length[id(row)]),
            "certainty": (100.0 * base["prob_max"], 100.0 * row["prob_max"]),
            **{name: _percent(row.get(f"{name}_original"), row.get(name)) for name in ("attention_max", "attention_sd")},
        })
    return pairs


def _percent(before, after) -> tuple[float | None, float | None]:
    return (None if before is None else 100.0 * before, None if after is None else 100.0 * after)


def property_changes(pairs: Sequence[dict]) -> dict:
    """Table 3: split -> property -> {n, change (mean after − before), p (Wilcoxon)}; a property
    with no known pair in a split is None."""
    selections = {"overall": lambda p: True, "flip_no": lambda p: not p["flip"], "flip_yes": lambda p: p["flip"],
                  "correct_no": lambda p: not p["correct"], "correct_yes": lambda p: p["correct"]}
    result = {}
    for split, keep in selections.items():
        chosen = [p for p in pairs if keep(p)]
        result[split] = {name: _change([p[name] for p in chosen]) for name in PROPERTIES}
    return result


def _change(values: list[tuple[float | None, float | None]]) -> dict | None:
    known = [(b, a) for b, a in values if b is not None and a is not None]
    if not known:
        return None
    before, after = (np.array(side, dtype=float) for side in zip(*known, strict=True))
    return {"n": len(known), "change": float(np.mean(after - before)), "p": wilcoxon_signed_rank(after, before).p}


def added_tokens(pairs: Sequence[tuple[str, str, int]], tasks: Sequence[str], strategies: Sequence[str]) -> dict:
    """Table 6 from (task, strategy, tokens added) triples: the mean per task and strategy, per
    strategy the mean over tasks, and `average` the mean of those over strategies."""
    by_task = {}
    for task in tasks:
        means = {s: [n for t, strategy, n in pairs if t == task and strategy == s] for s in strategies}
        by_task[task] = {s: float(np.mean(v)) for s, v in means.items() if v}
    by_strategy = {s: float(np.mean([by_task[t][s] for t in tasks if s in by_task[t]]))
                   for s in strategies if any(s in by_task[t] for t in tasks)}
    return {"by_task": by_task, "by_strategy": by_strategy,
            "average": float(np.mean(list(by_strategy.values()))) if by_strategy else None}


def classifier_added_tokens(rows: Sequence[dict], tasks: Sequence[str], strategies: Sequence[str]) -> dict | None:
    """Table 6 for a classifier's tokenizer (the rows' `tokens`); None for runs without token counts."""
    if any(r.get("tokens") is None for r in rows):
        return None
    originals = {(r["task"], r["index"]): r["tokens"] for r in rows if r["strategy"] == ORIGINAL}
    return added_tokens([(r["task"], r["strategy"], r["tokens"] - originals[r["task"], r["index"]])
                         for r in rows if r["strategy"] != ORIGINAL], tasks, strategies)


def f1_flip_correlation(cells: Sequence[tuple[float, float]]) -> dict:
    """Sec. 5 iv: Spearman's ρ between ΔF1 and the flip rate over (ΔF1, flip rate) cells."""
    delta_f1, flips = zip(*cells, strict=True) if cells else ((), ())
    return spearman(list(delta_f1), list(flips)).to_dict()


def analyse(rows: Sequence[dict], tasks_summary: dict, tasks: Sequence[str], strategies: Sequence[str]) -> dict:
    """The classifier summary's `analysis`: Table 3 per task and pooled, Table 6, the ΔF1-flip correlation."""
    pairs = {task: property_pairs(rows, task) for task in tasks}
    changes = {task: property_changes(p) for task, p in pairs.items()}
    if len(tasks) > 1:
        changes[POOLED] = property_changes([p for task in tasks for p in pairs[task]])
    cells = [(entry["delta_f1"], entry["flip_rate"]) for entries in tasks_summary.values()
             for strategy, entry in entries.items() if strategy != ORIGINAL]
    return {"property_changes": changes, "added_tokens": classifier_added_tokens(rows, tasks, strategies),
            "f1_flip_correlation": f1_flip_correlation(cells)}
