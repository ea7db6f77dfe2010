"""Paired significance tests, effect sizes, bootstrap intervals and p-value correction.

Pure functions on arrays, so every suite that compares two runs of the same items
(bias pairs, pronoun-accuracy flags, gender-fair ratings) reports the same statistics.
The tests delegate to scipy so that our p-values are scipy's, to the last digit; the
wrappers only add what scipy leaves undefined (no discordant pairs, no differences). One
p is computed here rather than by scipy, to the same digit: the Wilcoxon test's exact
sign-flip permutation on up to 13 differences with ties, which scipy evaluates by re-ranking
each of the 8,192 flipped samples (a second per call; a study report makes a hundred).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np
from scipy import stats

from queerbias.report.options import CORRECTIONS

#: adjusted-p thresholds for the significance stars, strictest first
STAR_LEVELS = ((0.001, "***"), (0.01, "**"), (0.05, "*"))
_BLOCK_ELEMENTS = 5_000_000  # resampled values held at once (40 MB of float64)


@dataclass(frozen=True)
class McNemarResult:
    """Exact McNemar test on paired binary flags.

    b counts items flagged before but not after, c items flagged after but not before;
    the odds ratio is b/c and Cohen's g is max(b, c)/(b + c) - 0.5.
    """

    b: int
    c: int
    p: float
    odds_ratio: float
    cohens_g: float


@dataclass(frozen=True)
class PairedTestResult:
    """A paired test on continuous values: statistic, p-value and effect size."""

    statistic: float
    p: float
    effect: float


def mcnemar_exact(before, after) -> McNemarResult:
    """Exact McNemar test: two-sided binomial test of b against b + c at 1/2.

    Only discordant items carry information about a change; with none, p is 1.
    """
    before, after = np.asarray(before, dtype=bool), np.asarray(after, dtype=bool)
    _check_paired(before, after)
    b = int(np.sum(before & ~after))
    c = int(np.sum(~before & after))
    if b + c == 0:
        return McNemarResult(b, c, 1.0, float("nan"), float("nan"))
    p = float(stats.binomtest(b, b + c, 0.5).pvalue)
    odds_ratio = b / c if c else float("inf")
    return McNemarResult(b, c, p, odds_ratio, max(b, c) / (b + c) - 0.5)


def sign_test(differences) -> float:
    """Exact two-sided sign test of paired differences against 0: the binomial test of the number of
    positive differences among the non-zero ones at 1/2 (p = 1 without any). On 0/1 flags before
    and after it is `mcnemar_exact`; on per-item means of such flags it tests their direction."""
    differences = np.asarray(differences, dtype=float)
    positive, negative = int(np.sum(differences > 0)), int(np.sum(differences < 0))
    if positive + negative == 0:
        return 1.0
    return float(stats.binomtest(positive, positive + negative, 0.5).pvalue)


def wilcoxon_signed_rank(after, before) -> PairedTestResult:
    """Wilcoxon signed-rank test as `scipy.stats.wilcoxon(after, before)` with defaults.

    Zero differences are dropped (scipy's default zero_method "wilcox"); when every
    difference is zero there is nothing to rank, and p is 1 instead of scipy's
    warning or error. The effect size is the matched-pairs rank-biserial correlation
    (R+ - R-)/(R+ + R-) over the same non-zero differences: positive when values rose.
    Where scipy's default is its exact sign-flip test (at most 13 differences, with zeros or
    ties), the same p comes from `_sign_flip_pvalue`, hundreds of times faster.
    """
    diff = _differences(after, before)
    nonzero = diff[diff != 0]
    if nonzero.size == 0:
        return PairedTestResult(0.0, 1.0, float("nan"))
    ranks = stats.rankdata(np.abs(nonzero))
    plus, minus = ranks[nonzero > 0].sum(), ranks[nonzero < 0].sum()
    effect = (plus - minus) / ranks.sum()
    tied = nonzero.size < diff.size or np.unique(ranks).size < ranks.size  # zeros, or tied |d|
    if diff.size <= SIGN_FLIP_MAX and tied and np.isfinite(diff).all():
        return PairedTestResult(float(min(plus, minus)), _sign_flip_pvalue(ranks, plus), float(effect))
    result = stats.wilcoxon(after, before)
    return PairedTestResult(float(result.statistic), float(result.pvalue), float(effect))


#: scipy.stats.wilcoxon (method "auto") tests at most this many differences with zeros or tied |d|
#: exactly, by a permutation test over all 2^n sign flips that ranks every flipped sample anew:
#: 0.7 s at n = 12 and 1.4 s at n = 13 per call, where a study report makes a hundred calls
SIGN_FLIP_MAX = 13


def _sign_flip_pvalue(ranks: np.ndarray, observed: float) -> float:
    """scipy's exact sign-flip p of the signed-rank sum `observed` (R+), from the ranks of the non-zero
    |d| (a flip changes no rank): the null distribution is R+ of every subset of them; each of the
    2^zeros flips of the zero differences repeats it, which leaves every share as it is. Half-integer
    ranks add exactly, so the counts, and with scipy's tolerance and two-sided rule the p, are scipy's."""
    flips = (np.arange(2 ** ranks.size)[:, None] >> np.arange(ranks.size)) & 1
    null = flips @ ranks
    gamma = abs(np.finfo(np.float64).eps * 100 * observed)  # scipy.stats.permutation_test's tolerance
    less = np.count_nonzero(null <= observed + gamma) / null.size
    greater = np.count_nonzero(null >= observed - gamma) / null.size
    return float(np.clip(min(less, greater) * 2, 0.0, 1.0))


def paired_ttest(after, before) -> PairedTestResult:
    """Paired t-test as `scipy.stats.ttest_rel(after, before)`; effect size Cohen's d_z.

    All-zero differences give p = 1; a single pair leaves the test undefined (NaN).
    """
    diff = _differences(after, before)
    if not np.any(diff):
        return PairedTestResult(0.0, 1.0, float("nan"))
    if diff.size < 2:
        return PairedTestResult(float("nan"), float("nan"), float("nan"))
    result = stats.ttest_rel(after, before)
    sd = diff.std(ddof=1)
    effect = diff.mean() / sd if sd > 0 else float("nan")
    return PairedTestResult(float(result.statistic), float(result.pvalue), float(effect))


def bootstrap_mean_ci(
    diffs, rng: np.random.Generator, n_resamples: int = 10_000, level: float = 0.95
) -> np.ndarray:
    """Percentile bootstrap interval of the mean of paired differences.

    `diffs` is (n,) or (n, k): the k columns are resampled with the same items, so the
    intervals of several quantities measured on one set of pairs come from one
    resampling. Returns (2,) or (2, k): lower and upper bound. Resamples are drawn in
    blocks to bound memory for large n; results depend only on the generator's state.
    """
    diffs = np.asarray(diffs, dtype=float)
    if len(diffs) == 0:  # before the reshape, which cannot size an empty sample's columns
        raise ValueError("cannot bootstrap an empty sample")
    columns = np.ascontiguousarray(diffs.reshape(len(diffs), -1).T)  # 1-d gathers are much faster
    n = columns.shape[1]
    block = max(1, min(n_resamples, _BLOCK_ELEMENTS // n))
    means = np.empty((n_resamples, len(columns)))
    for start in range(0, n_resamples, block):
        stop = min(start + block, n_resamples)
        idx = rng.integers(0, n, size=(stop - start, n))
        for j, column in enumerate(columns):
            means[start:stop, j] = column[idx].mean(axis=1)
    alpha = (1 - level) / 2
    bounds = np.quantile(means, [alpha, 1 - alpha], axis=0)
    return bounds.reshape((2,) + diffs.shape[1:])


def stratified_bootstrap_means(
    strata, rng: np.random.Generator, n_resamples: int = 10_000
) -> np.ndarray:
    """Resampled per-stratum column means: (n_resamples, n_strata, k).

    Each stratum is an (n_s, k) array of paired columns (before and after of the same
    items); items are drawn with replacement within their stratum, the same draw for
    every column, so stratum sizes stay fixed and the pairing is kept. This is the
    resampling behind intervals of figures built from group means, such as the distance
    to indifference. Drawn in blocks to bound memory; depends only on the generator's state.
    """
    strata = [np.asarray(s, dtype=float) for s in strata]
    if not strata or any(len(s) == 0 for s in strata):
        raise ValueError("cannot bootstrap an empty stratum")
    strata = [s.reshape(len(s), -1) for s in strata]
    k = strata[0].shape[1]
    means = np.empty((n_resamples, len(strata), k))
    for j, stratum in enumerate(strata):
        columns = np.ascontiguousarray(stratum.T)
        n = columns.shape[1]
        block = max(1, min(n_resamples, _BLOCK_ELEMENTS // n))
        for start in range(0, n_resamples, block):
            stop = min(start + block, n_resamples)
            idx = rng.integers(0, n, size=(stop - start, n))
            for c, column in enumerate(columns):
                means[start:stop, j, c] = column[idx].mean(axis=1)
    return means


def bootstrap_p(resampled) -> float:
    """Two-sided bootstrap p-value of "no change": twice the smaller share of resampled
    changes on either side of 0, at most 1 (a percentile-interval inversion)."""
    resampled = np.asarray(resampled, dtype=float)
    share = min(np.mean(resampled <= 0), np.mean(resampled >= 0))
    return float(min(1.0, 2 * share))


def adjust_pvalues(pvalues, method: str = "holm") -> np.ndarray:
    """Family-wise (Holm) or false-discovery-rate (Benjamini-Hochberg) adjusted p-values.

    NaN entries (undefined tests) are left NaN and are not counted in the family.
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full_like(p, np.nan)
    valid = ~np.isnan(p)
    m = int(valid.sum())
    if m == 0:
        return out
    values = p[valid]
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    if method == "holm":
        adjusted = np.maximum.accumulate(ranked * (m - np.arange(m)))
    elif method == "bh":
        adjusted = np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1]
    else:
        raise ValueError(f"unknown correction {method!r}; expected one of {tuple(CORRECTIONS)}")
    result = np.empty(m)
    result[order] = np.minimum(adjusted, 1.0)
    out[valid] = result
    return out


def stars(p: float) -> str:
    """Significance stars for an (adjusted) p-value: * < .05, ** < .01, *** < .001."""
    for threshold, mark in STAR_LEVELS:
        if p < threshold:
            return mark
    return ""


def _check_paired(before: np.ndarray, after: np.ndarray) -> None:
    if before.shape != after.shape or before.ndim != 1:
        raise ValueError(f"paired samples must be 1-d and equally long: {before.shape} vs {after.shape}")


def _differences(after, before) -> np.ndarray:
    after, before = np.asarray(after, dtype=float), np.asarray(before, dtype=float)
    _check_paired(before, after)
    return after - before


def cell_rng(seed: int, *names: str) -> np.random.Generator:
    """One generator per table cell (group, strategy, setting...), seeded from the run's seed
    and the cell's names, so a cell's interval does not depend on which other cells exist."""
    return np.random.default_rng([seed, zlib.crc32("|".join(names).encode("utf-8"))])


@dataclass(frozen=True)
class BootstrapResult:
    """Interval, standard error and (for a change) two-sided p-value from resampling units."""

    ci: tuple[float | None, float | None]
    se: float | None
    p: float | None = None


def bootstrap_interval(statistic, rng: np.random.Generator, n_resamples: int = 1_000,
                       level: float = 0.95) -> BootstrapResult:
    """Percentile bootstrap of a figure that is not a mean (a GIFI dimension, say).

    `statistic(rng)` draws one resample of the units and returns the figure on it, or None
    where it is undefined on that resample (left out). SE: the SD of the resampled figures.
    """
    values = _resampled(statistic, rng, n_resamples)
    if values.size == 0:
        return BootstrapResult((None, None), None)
    alpha = (1 - level) / 2
    low, high = np.quantile(values, [alpha, 1 - alpha])
    return BootstrapResult((float(low), float(high)), float(values.std(ddof=1)) if values.size > 1 else None)


def bootstrap_statistic(statistic, rng: np.random.Generator, n_resamples: int = 10_000,
                        level: float = 0.95) -> BootstrapResult:
    """Paired bootstrap of the change of a figure that is not a mean.

    `statistic(rng)` draws one resample of the units (the same units for both runs) and
    returns (before, after) on it. Interval: percentiles of after − before; p: `bootstrap_p`.
    """
    def change(generator):
        pair = statistic(generator)
        return None if pair is None or None in pair else pair[1] - pair[0]

    deltas = _resampled(change, rng, n_resamples)
    if deltas.size == 0:
        return BootstrapResult((None, None), None, None)
    alpha = (1 - level) / 2
    low, high = np.quantile(deltas, [alpha, 1 - alpha])
    return BootstrapResult((float(low), float(high)), float(deltas.std(ddof=1)) if deltas.size > 1 else None,
                           bootstrap_p(deltas))


def _resampled(statistic, rng: np.random.Generator, n_resamples: int) -> np.ndarray:
    values = [statistic(rng) for _ in range(n_resamples)]
    return np.asarray([v for v in values if v is not None], dtype=float)


@dataclass(frozen=True)
class Correlation:
    """Spearman's rho over paired values and its two-sided p-value."""

    n: int
    rho: float | None
    p: float | None

    def to_dict(self) -> dict:
        return {"n": self.n, "rho": self.rho, "p": self.p}


EXACT_MAX = 8  # up to 8! = 40,320 pairings the permutation test is exact and quick


def spearman(a, b) -> Correlation:
    """Spearman correlation of two score lists; rho and p None where undefined (a constant side,
    fewer than three values). Pairs with a missing (NaN) value on either side are left out.

    rho: `scipy.stats.spearmanr`. p: for up to EXACT_MAX values an exact permutation test over
    all pairings (`scipy.stats.permutation_test`, permutation_type="pairings"), since
    spearmanr's t approximation is poor for six strategies or a few models; above that,
    spearmanr's p-value.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    _check_paired(a, b)
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    if len(a) < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return Correlation(len(a), None, None)
    result = stats.spearmanr(a, b)
    rho, p = float(result.statistic), float(result.pvalue)
    if len(a) <= EXACT_MAX:
        # one sample's order permuted against the other's ranks: the n! pairings (given both samples, scipy
        # permutes each, (n!)^2 orders: 25 million at n = 7, 1.6 billion and 20 GB at n = 8)
        fixed = stats.rankdata(b)
        p = float(stats.permutation_test((stats.rankdata(a),), lambda x, axis=-1: _pearson(x, fixed, axis),
                                         vectorized=True, permutation_type="pairings", n_resamples=np.inf).pvalue)
    return Correlation(len(a), rho if np.isfinite(rho) else None, p if np.isfinite(p) else None)


def _pearson(x, y, axis=-1):
    """Pearson's r along an axis (on ranks: Spearman's rho), vectorised for permutation_test."""
    x = x - x.mean(axis=axis, keepdims=True)
    y = y - y.mean(axis=axis, keepdims=True)
    return (x * y).sum(axis=axis) / np.sqrt((x * x).sum(axis=axis) * (y * y).sum(axis=axis))


def bonferroni(pvalues) -> list:
    """p times the number of (defined) tests, capped at 1; None stays None."""
    defined = [p for p in pvalues if p is not None]
    return [None if p is None else min(1.0, p * len(defined)) for p in pvalues]


def finite_or_none(value):
    """A float for JSON, None where the statistic is undefined (NaN) or unbounded (inf)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def json_safe(stats: dict) -> dict:
    """Statistics as JSON values: ints as int, undefined or unbounded numbers as None."""
    converted = {}
    for key, value in stats.items():
        if isinstance(value, str) or value is None:
            converted[key] = value
        elif isinstance(value, list):
            converted[key] = [finite_or_none(v) for v in value]
        elif isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
            converted[key] = int(value)
        else:
            converted[key] = finite_or_none(value)
    return converted
