"""The binary distance against its noise floor: what a model choosing at random per pair would score.

A group's bias score is the share of its n pairs that prefer the stereotype, so even a
model with no preference at all (each pair a fair coin) scores |bias - 50| > 0 by chance:
E|100 K/n - 50| with K ~ Binomial(n, 1/2), computed exactly (about 8.8 points for 20 pairs,
2.8 for 200). The distance to indifference (the mean over groups of |bias - 50|) therefore
has a floor, the mean of that expectation over the run's groups, below which it mostly
measures sampling noise; a target such as "-50%" reads differently from a base of 30
than from a base of 12 (issue 32). Beside the distance go:

- `floor`: the coin-flip expectation of the distance for these group sizes;
- `over`: the distance minus the floor (its change is the distance's change);
- `containing`: the % of groups whose exact (Clopper-Pearson) 95% interval of the bias score
  contains 50, i.e. groups the pairs cannot tell from indifference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from functools import cache
from math import comb

import numpy as np
from scipy.stats import binomtest

LEVEL = 0.95


@cache
def coin_flip_distance(n: int) -> float:
    """E|100 K/n - 50| for K ~ Binomial(n, 1/2), exactly (as a fraction, then rounded once)."""
    if n < 1:
        raise ValueError(f"a group needs at least one pair, got {n}")
    total = sum(comb(n, k) * abs(Fraction(100 * k, n) - 50) for k in range(n + 1))
    return float(total / 2**n)


def distance_floor(sizes: Sequence[int]) -> float | None:
    """The coin-flip expectation of the distance to indifference: the mean over groups of
    `coin_flip_distance` of each group's size (None without groups)."""
    return float(np.mean([coin_flip_distance(int(n)) for n in sizes])) if len(sizes) else None


@cache
def _contains_half(n: int, level: float = LEVEL) -> np.ndarray:
    """For k = 0..n: whether the exact interval of k/n at `level` contains 1/2."""
    found = []
    for k in range(n + 1):
        interval = binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
        found.append(interval.low <= 0.5 <= interval.high)
    return np.array(found)


def containing(percents: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """% of groups whose exact interval contains 50, from bias scores in % (`percents`: [..., groups,
    k], the groups in the order of `sizes`) -> [..., k]."""
    counts = np.rint(np.asarray(percents) / 100.0 * np.asarray(sizes)[:, None]).astype(int)
    inside = np.empty(counts.shape, dtype=bool)
    for g, n in enumerate(sizes):
        inside[..., g, :] = _contains_half(int(n))[counts[..., g, :]]
    return 100.0 * inside.mean(axis=-2)


def floor_summary(groups: Mapping[str, Mapping], distance: float | None) -> dict:
    """A run's `noise_floor` from its per-group summary (n, bias_score): the floor for its group
    sizes, the distance above it, and the groups whose interval contains 50 (number and %)."""
    known = {g: f for g, f in groups.items() if f.get("bias_score") is not None and f.get("n")}
    sizes = [int(f["n"]) for f in known.values()]
    floor = distance_floor(sizes)
    if floor is None:
        return {"floor": None, "over": None, "containing": None, "n_containing": 0, "n_groups": 0, "level": LEVEL}
    share = float(containing(np.array([[f["bias_score"]] for f in known.values()]), sizes)[0])
    return {"floor": floor, "over": None if distance is None else distance - floor, "containing": share,
            "n_containing": int(round(share * len(known) / 100)), "n_groups": len(known), "level": LEVEL}
