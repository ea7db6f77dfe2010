"""The measures of Lou's two views, as pure functions on arrays.

Classifier view (Waldis et al. 2024, Figures 3-4): macro-F1 and label flip rate.
LM view: how often a model prefers the reformulation, with bootstrap intervals; and
the agreement of rankings. Percentages are 0-100 throughout.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from queerbias.report.paired_stats import bootstrap_mean_ci


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


def flip_rate(pred_original, pred_reformulated) -> float:
    """Percentage of instances whose predicted label changes under the reformulation."""
    before, after = np.asarray(pred_original), np.asarray(pred_reformulated)
    if before.shape != after.shape or before.size == 0:
        raise ValueError("prediction arrays must be non-empty and equally long")
    return 100.0 * float(np.mean(before != after))


def preference_summary(deltas, rng: np.random.Generator, n_resamples: int = 10_000,
                       level: float = 0.95) -> dict:
    """Mean Δ log-likelihood and % of instances preferring the reformulation (Δ > 0).

    Ties (Δ = 0 for different texts) count as not preferred and stay in the denominator.
    Both intervals come from one paired percentile bootstrap over instances.
    """
    deltas = np.asarray(deltas, dtype=float)
    if deltas.size == 0:
        return {"mean_delta": None, "ci_delta": [None, None], "preference": None, "ci_preference": [None, None]}
    columns = np.column_stack([deltas, 100.0 * (deltas > 0)])
    ci = bootstrap_mean_ci(columns, rng, n_resamples, level)
    return {"mean_delta": float(deltas.mean()), "ci_delta": [float(ci[0, 0]), float(ci[1, 0])],
            "preference": float(columns[:, 1].mean()), "ci_preference": [float(ci[0, 1]), float(ci[1, 1])]}


def spearman(a, b) -> float | None:
    """Spearman's rho of two rankings' scores; None when undefined (constant input, < 2 items)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return None
    rho = float(stats.spearmanr(a, b).statistic)
    return rho if math.isfinite(rho) else None
