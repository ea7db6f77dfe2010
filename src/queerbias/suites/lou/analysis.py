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
  ΔF1 is the signed change of macro-F1 (reformulation − original).
- `flip_properties` (Sec. 6 iii, Table 4): the originals' properties (the same 0-100 scales
  as Table 3) split by whether their reformulation flipped the prediction, mean ± SD over
  (instance, strategy) pairs, with the two-sided Mann-Whitney U test of the two groups (the
  paper states significance without naming its test).
- `flip_bins` (Sec. 6 iii, Fig. 7): per property, the flip share of the pairs whose original
  falls in each fifth of the 0-100 scale.
- `performance_cells`, `performance_relation` (Sec. 5 iv, Fig. 5): per (model, task, strategy)
  cell the model's macro-F1 on the task's original texts, ΔF1 and flip rate, and Spearman's ρ
  of each change against that F1. The paper relates the changes to "the absolute performance"
  and to "task difficulty", i.e. how well the model does on the task; the F1 on the
  reformulations would be ΔF1 plus a constant within a task and correlate with ΔF1 by
  construction. Within one task of one model the original F1 is a single value, so ρ is
  undefined there: it exists across tasks (a run with several) or models (`consistency.json`).

Length is counted in words (whitespace-separated, as Table 5 counts it; `readability`), or in
the classifier's tokens (`length="tokens"`). Table 5 itself describes the task data, not a
run's rows (`task_data`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats

from queerbias.report.paired_stats import spearman, wilcoxon_signed_rank
from queerbias.suites.lou.data import ORIGINAL, POOLED

PROPERTIES = {"flesch": "Norm. Flesch", "length": "Norm. Length", "certainty": "Prediction Certainty",
              "attention_max": "Attention Max", "attention_sd": "Attention Variation"}
SPLITS = {"overall": "Overall", "flip_no": "Flip: no", "flip_yes": "Flip: yes", "correct_no": "Correct: no",
          "correct_yes": "Correct: yes"}
#: what a text's length is counted in (`property_pairs`): words (Table 5's unit) or the classifier's tokens
LENGTH_UNITS = {"words": "words", "tokens": "tokens"}
#: Fig. 7's bins: fifths of the 0-100 scale every property is on
BINS = (0.0, 20.0, 40.0, 60.0, 80.0, 100.0)


def normalise(values: Sequence[float | None]) -> list[float | None]:
    """Min-max scaling to 0-100 (None stays None; all equal: None, as the scale is undefined)."""
    known = [v for v in values if v is not None]
    if not known or max(known) == min(known):
        return [None] * len(values)
    low, span = min(known), max(known) - min(known)
    return [None if v is None else 100.0 * (v - low) / span for v in values]


def property_pairs(rows: Sequence[dict], task: str, length: str = "words") -> list[dict]:
    """Per non-identical (instance, strategy) of `task`: its split flags and each property before
    (original) and after (reformulation), on 0-100; a property the rows lack is None. `length`:
    the row column the length is counted in (`LENGTH_UNITS`)."""
    rows = [r for r in rows if r["task"] == task]
    flesch = dict(zip(map(id, rows), normalise([r.get("flesch") for r in rows]), strict=True))
    length = dict(zip(map(id, rows), normalise([r.get(LENGTH_UNITS[length]) for r in rows]), strict=True))
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


def flip_properties(pairs: Sequence[dict]) -> dict:
    """Table 4: property -> for the originals whose reformulation did not flip ("no") and did ("yes"):
    n, mean and SD (ddof 1) of the original's value, and the Mann-Whitney U p-value of the two groups."""
    result = {}
    for name in PROPERTIES:
        groups = {side: [p[name][0] for p in pairs if p["flip"] == flipped and p[name][0] is not None]
                  for side, flipped in (("no", False), ("yes", True))}
        entry = {side: {"n": len(values), "mean": float(np.mean(values)) if values else None,
                        "sd": float(np.std(values, ddof=1)) if len(values) > 1 else None}
                 for side, values in groups.items()}
        entry["p"] = (float(stats.mannwhitneyu(groups["yes"], groups["no"], alternative="two-sided").pvalue)
                      if groups["yes"] and groups["no"] else None)
        result[name] = entry
    return result


def flip_bins(pairs: Sequence[dict]) -> dict:
    """Fig. 7: property -> one entry per fifth of the 0-100 scale of the original's value (the last
    includes 100): its bounds, n pairs and the share (%) of them whose reformulation flipped."""
    result = {}
    for name in PROPERTIES:
        known = [(p[name][0], p["flip"]) for p in pairs if p[name][0] is not None]
        bins = []
        for low, high in zip(BINS, BINS[1:], strict=False):
            inside = [flip for value, flip in known if low <= value < high or (high == BINS[-1] and value == high)]
            bins.append({"low": low, "high": high, "n": len(inside),
                         "flip_share": 100.0 * float(np.mean(inside)) if inside else None})
        result[name] = bins
    return result


def performance_cells(tasks_summary: dict, model: str | None = None) -> list[dict]:
    """Fig. 5's points of one classifier: per (task, strategy) the model's macro-F1 on the task's
    original texts (`original_f1`), ΔF1 and flip rate; `model` labels them where several are pooled."""
    return [{**({"model": model} if model is not None else {}), "task": task, "strategy": strategy,
             "original_f1": entries[ORIGINAL]["macro_f1"], "delta_f1": entry["delta_f1"],
             "flip_rate": entry.get("flip_rate")}
            for task, entries in tasks_summary.items() for strategy, entry in entries.items() if strategy != ORIGINAL]


def performance_relation(cells: Sequence[dict]) -> dict:
    """Fig. 5: Spearman's ρ of ΔF1 and of the flip rate against the original macro-F1 over the cells;
    undefined (None) where the original F1 is one value (one task of one model), as `spread` says."""
    f1 = [c["original_f1"] for c in cells]
    spread = {"tasks": len({c["task"] for c in cells}), "models": len({c.get("model") for c in cells}),
              "original_f1_values": len(set(f1))}
    return {"cells": list(cells), "spread": spread, "delta_f1": spearman(f1, [c["delta_f1"] for c in cells]).to_dict(),
            "flip_rate": spearman(f1, [c["flip_rate"] for c in cells]).to_dict()}


def analyse(rows: Sequence[dict], tasks_summary: dict, tasks: Sequence[str], strategies: Sequence[str],
            length: str = "words") -> dict:
    """The classifier summary's `analysis`: Tables 3 and 4 and Fig. 7 per task and pooled, Table 6,
    the ΔF1-flip correlation and Fig. 5."""
    if length == "tokens" and any(r.get("tokens") is None for r in rows):
        length = "words"  # a run written before token counts were kept
    pairs = {task: property_pairs(rows, task, length) for task in tasks}
    if len(tasks) > 1:
        pairs[POOLED] = [p for task in tasks for p in pairs[task]]
    cells = [(entry["delta_f1"], entry["flip_rate"]) for entries in tasks_summary.values()
             for strategy, entry in entries.items() if strategy != ORIGINAL]
    return {"length": length, "property_changes": {scope: property_changes(p) for scope, p in pairs.items()},
            "flip_properties": {scope: flip_properties(p) for scope, p in pairs.items()},
            "flip_bins": {scope: flip_bins(p) for scope, p in pairs.items()},
            "added_tokens": classifier_added_tokens(rows, tasks, strategies),
            "f1_flip_correlation": f1_flip_correlation(cells),
            "performance": performance_relation(performance_cells(tasks_summary))}
