"""The measures of Lou's two views, as pure functions on arrays.

Classifier view (Waldis et al. 2024, Sec. 4.3, Figures 3-4): macro-F1 and label flip
rate; beside macro-F1, the F1 that upstream's `run_fine_tuning_task.py` logs as
"f1-macro" (for binary tasks `f1_score(labels, preds)`, the positive class's F1),
so our ΔF1 can be set beside the paper's numbers. LM view: how often a model prefers
the reformulation, with bootstrap intervals. Ranking consistency (Sec. 5 v):
Spearman's rho with its p-value. Percentages are 0-100 throughout.
"""

from __future__ import annotations

import itertools

import numpy as np

from queerbias.report.paired_stats import bootstrap_mean_ci, spearman
from queerbias.suites.lou.analysis import f1_flip_correlation, performance_cells, performance_relation
from queerbias.suites.lou.data import ORIGINAL


def macro_f1(labels, preds) -> float:
    """Macro-averaged F1 in percent over the classes seen in labels or predictions.

    Per class F1 = 2TP / (2TP + FP + FN), as scikit-learn's `f1_score(average="macro")`
    with its default label set.
    """
    labels, preds = np.asarray(labels), np.asarray(preds)
    if labels.shape != preds.shape or labels.size == 0:
        raise ValueError("labels and predictions must be non-empty and equally long")
    scores = []
    for cls in np.union1d(labels, preds):
        tp = np.sum((preds == cls) & (labels == cls))
        denominator = 2 * tp + np.sum((preds == cls) & (labels != cls)) + np.sum((preds != cls) & (labels == cls))
        scores.append(2 * tp / denominator if denominator else 0.0)
    return 100.0 * float(np.mean(scores))


def upstream_f1(labels, preds, positive: int = 1) -> float:
    """F1 in percent as upstream logs it: the positive class's F1 when the labels are binary
    (0/1), macro-F1 otherwise (upstream switches on the number of training classes)."""
    labels, preds = np.asarray(labels), np.asarray(preds)
    if labels.shape != preds.shape or labels.size == 0:
        raise ValueError("labels and predictions must be non-empty and equally long")
    if not set(np.union1d(labels, preds).tolist()) <= {0, 1}:
        return macro_f1(labels, preds)
    tp = np.sum((preds == positive) & (labels == positive))
    denominator = 2 * tp + np.sum((preds == positive) & (labels != positive)) + np.sum((preds != positive) & (labels == positive))
    return 100.0 * float(2 * tp / denominator) if denominator else 0.0


def flip_rate(pred_original, pred_reformulated) -> float:
    """Percentage of instances whose predicted label changes under the reformulation."""
    before, after = np.asarray(pred_original), np.asarray(pred_reformulated)
    if before.shape != after.shape or before.size == 0:
        raise ValueError("prediction arrays must be non-empty and equally long")
    return 100.0 * float(np.mean(before != after))


def preference_summary(deltas, rng: np.random.Generator, n_resamples: int = 10_000,
                       level: float = 0.95) -> dict:
    """Mean Δ log-likelihood and % of instances preferring the reformulation.

    An instance scores 100 when Δ > 0, 0 when Δ < 0 and 50 for a tie (Δ = 0 for
    different texts), so a model indifferent between the versions sits at the 50% the
    reports call "no preference"; the ties are also counted (`n_ties`). Both intervals
    come from one paired percentile bootstrap over instances.
    """
    deltas = np.asarray(deltas, dtype=float)
    if deltas.size == 0:
        return {"mean_delta": None, "ci_delta": [None, None], "preference": None, "ci_preference": [None, None],
                "n_ties": 0}
    columns = np.column_stack([deltas, 50.0 * (np.sign(deltas) + 1)])
    ci = bootstrap_mean_ci(columns, rng, n_resamples, level)
    return {"mean_delta": float(deltas.mean()), "ci_delta": [float(ci[0, 0]), float(ci[1, 0])],
            "preference": float(columns[:, 1].mean()), "ci_preference": [float(ci[0, 1]), float(ci[1, 1])],
            "n_ties": int(np.sum(deltas == 0))}


def classifier_bootstrap(labels, pred_original, pred_reformulated, rng: np.random.Generator,
                         n_resamples: int = 2_000, level: float = 0.95) -> dict:
    """Paired percentile bootstrap intervals of ΔF1 (reformulated − original) and of the flip rate.

    Instances are resampled with the same indices for both versions. Each resample's
    macro-F1 is `macro_f1` on that resample (classes seen in it), computed from
    per-class counts: a multiplicity matrix times per-instance indicators, in blocks.
    """
    labels, before, after = (np.asarray(a) for a in (labels, pred_original, pred_reformulated))
    if not labels.size == before.size == after.size or labels.ndim != 1 or labels.size == 0:
        raise ValueError("labels and predictions must be non-empty and equally long")
    n, classes = labels.size, np.union1d(labels, np.union1d(before, after))
    # columns: per class [label==c, pred_orig==c, tp_orig, pred_ref==c, tp_ref], then flipped
    indicators = np.column_stack([
        *(column for c in classes for column in (labels == c, before == c, (before == c) & (labels == c),
                                                 after == c, (after == c) & (labels == c))),
        before != after]).astype(float)
    block = max(1, min(n_resamples, 5_000_000 // n))
    delta_f1, flips = np.empty(n_resamples), np.empty(n_resamples)
    for start in range(0, n_resamples, block):
        size = min(block, n_resamples - start)
        idx = rng.integers(0, n, size=(size, n))
        weights = np.bincount((idx + n * np.arange(size)[:, None]).ravel(), minlength=size * n).reshape(size, n)
        counts = weights @ indicators
        per_class = counts[:, :-1].reshape(size, len(classes), 5)
        gold = per_class[:, :, 0]
        f1 = [_resampled_macro_f1(gold, per_class[:, :, 1 + 2 * v], per_class[:, :, 2 + 2 * v]) for v in (0, 1)]
        delta_f1[start:start + size] = f1[1] - f1[0]
        flips[start:start + size] = 100.0 * counts[:, -1] / n
    alpha = (1 - level) / 2
    bounds = np.quantile(np.column_stack([delta_f1, flips]), [alpha, 1 - alpha], axis=0)
    return {"ci_delta_f1": [float(v) for v in bounds[:, 0]], "ci_flip_rate": [float(v) for v in bounds[:, 1]]}


def _resampled_macro_f1(gold: np.ndarray, predicted: np.ndarray, tp: np.ndarray) -> np.ndarray:
    """Macro-F1 (%) per resample from (resamples, classes) counts; unseen classes are left out."""
    denominator = gold + predicted  # = 2TP + FP + FN
    seen = denominator > 0
    f1 = np.divide(2 * tp, denominator, out=np.zeros_like(tp), where=seen)
    return 100.0 * f1.sum(axis=1) / seen.sum(axis=1)


def ranking_consistency(summaries: dict[str, dict], strategies) -> dict:
    """Spearman agreement of several classifiers' summaries, per task.

    strategy_rankings: for each pair of models, ρ between their ΔF1 over the strategies
    (do they find the same strategies hard?). model_rankings: for each strategy, ρ between
    the models' F1 on the original and on the reformulation (the paper's check that model
    rankings survive gender-fair language, Sec. 5 v). Each ρ comes with its p-value
    (`report.paired_stats.spearman`). f1_flip_correlation: ΔF1 against the flip rate over every
    model, task and strategy (Sec. 5 iv); performance: Fig. 5's ΔF1 and flip rate against each
    model's F1 on the original texts over the same cells, where the original F1 varies (Sec. 5 iv).
    """
    labels = list(summaries)
    shared = set.intersection(*(set(s["tasks"]) for s in summaries.values()))
    tasks = [t for t in next(iter(summaries.values()))["tasks"] if t in shared]
    result = {}
    for task in tasks:
        entries = {label: summaries[label]["tasks"][task] for label in labels}
        pairs = [{"a": a, "b": b, **spearman([entries[a][s]["delta_f1"] for s in strategies],
                                             [entries[b][s]["delta_f1"] for s in strategies]).to_dict()}
                 for a, b in itertools.combinations(labels, 2)]
        original = [entries[label]["original"]["macro_f1"] for label in labels]
        models = {s: spearman(original, [entries[label][s]["macro_f1"] for label in labels]).to_dict()
                  for s in strategies}
        result[task] = {"strategy_rankings": pairs, "model_rankings": models}
    cells = [(entry["delta_f1"], entry.get("flip_rate"))
             for label in labels for task in tasks for entry in (summaries[label]["tasks"][task][s] for s in strategies)]
    performance = performance_relation([cell for label in labels for cell in performance_cells(
        {task: {s: summaries[label]["tasks"][task][s] for s in (ORIGINAL, *strategies)} for task in tasks}, label)])
    return {"models": labels, "tasks": result, "f1_flip_correlation": f1_flip_correlation(cells),
            "performance": performance}
