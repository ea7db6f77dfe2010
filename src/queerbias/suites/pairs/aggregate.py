"""Per-group and overall figures from per-pair outcomes (pure functions).

bias score = 100 * share of biased pairs, neutral pairs counted in the
denominator as the reference does; its standard error is the binomial one.
soft score = mean of the per-pair soft scores, with the standard error of the mean.
distance to indifference = mean over groups of |score - 50|, for the bias and the soft
score: the overall score can sit at 50 while its groups sit at 0 and 100.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np


def summarise(biased: Sequence[int], neutral: Sequence[int], soft: Sequence[float]) -> dict:
    n = len(biased)
    if n == 0:
        return {"n": 0, "n_neutral": 0, "bias_score": None, "bias_se": None,
                "soft_score": None, "soft_se": None}
    share = sum(biased) / n
    soft_values = np.asarray(soft, dtype=float)
    soft_se = float(soft_values.std(ddof=1) / math.sqrt(n)) if n > 1 else None
    return {
        "n": n,
        "n_neutral": int(sum(neutral)),
        "bias_score": round(100 * share, 4),
        "bias_se": round(100 * math.sqrt(share * (1 - share) / n), 4),
        "soft_score": round(float(soft_values.mean()), 4),
        "soft_se": None if soft_se is None else round(soft_se, 4),
    }


def summarise_groups(groups: Sequence[str], biased: Sequence[int], neutral: Sequence[int],
                     soft: Sequence[float]) -> tuple[dict, dict]:
    """(overall, {group: figures}) with groups in order of first appearance."""
    by_group: dict[str, list[int]] = {}
    for index, group in enumerate(groups):
        by_group.setdefault(group, []).append(index)
    per_group = {
        group: summarise([biased[i] for i in idx], [neutral[i] for i in idx], [soft[i] for i in idx])
        for group, idx in by_group.items()
    }
    return summarise(biased, neutral, soft), per_group


def distance_to_indifference(groups: Mapping[str, Mapping]) -> dict:
    """Unweighted mean over groups of |bias - 50| and |soft - 50| (0 = every group indifferent).

    A mitigation is judged by this figure rather than the overall score, which averages
    groups pulled in opposite directions into a reassuring 50. Groups without a figure
    (no pairs) are left out; `n_groups` says how many counted.
    """
    bias = [abs(g["bias_score"] - 50.0) for g in groups.values() if g.get("bias_score") is not None]
    soft = [abs(g["soft_score"] - 50.0) for g in groups.values() if g.get("soft_score") is not None]
    return {"bias": round(float(np.mean(bias)), 4) if bias else None,
            "soft": round(float(np.mean(soft)), 4) if soft else None,
            "n_groups": len(bias)}
