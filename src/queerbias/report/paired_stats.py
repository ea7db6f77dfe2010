"""Paired significance tests, effect sizes, bootstrap intervals and p-value correction.

Pure functions on arrays, so every suite that compares two runs of the same items
(bias pairs, pronoun-accuracy flags, gender-fair ratings) reports the same statistics.
The tests delegate to scipy so that our p-values are scipy's, to the last digit; the
wrappers only add what scipy leaves undefined (no discordant pairs, no differences).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
from scipy import stats

from queerbias.report.choices import CORRECTIONS

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


def wilcoxon_signed_rank(after, before) -> PairedTestResult:
    """Wilcoxon signed-rank test as `scipy.stats.wilcoxon(after, before)` with defaults.

    Zero differences are dropped (scipy's default zero_method "wilcox"); when every
    difference is zero there is nothing to rank, and p is 1 instead of scipy's
    warning or error. The effect size is the matched-pairs rank-biserial correlation
    (R+ - R-)/(R+ + R-) over the same non-zero differences: positive when values rose.
    """
    diff = _differences(after, before)
    nonzero = diff[diff != 0]
    if nonzero.size == 0:
        return PairedTestResult(0.0, 1.0, float("nan"))
    result = stats.wilcoxon(after, before)
    ranks = stats.rankdata(np.abs(nonzero))
    effect = (ranks[nonzero > 0].sum() - ranks[nonzero < 0].sum()) / ranks.sum()
    return PairedTestResult(float(result.statistic), float(result.pvalue), float(effect))


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
    columns = np.ascontiguousarray(diffs.reshape(len(diffs), -1).T)  # 1-d gathers are much faster
    n = columns.shape[1]
    if n == 0:
        raise ValueError("cannot bootstrap an empty sample")
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
        raise ValueError(f"unknown correction {method!r}; expected one of {CORRECTIONS}")
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
