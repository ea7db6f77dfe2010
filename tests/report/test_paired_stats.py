"""The statistics equal scipy's on the same inputs, and hand-computed values on small cases."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from queerbias.report.paired_stats import (
    BootstrapResult,
    adjust_pvalues,
    bonferroni,
    bootstrap_interval,
    bootstrap_mean_ci,
    bootstrap_p,
    bootstrap_statistic,
    cell_rng,
    finite_or_none,
    json_safe,
    mcnemar_exact,
    paired_ttest,
    sign_test,
    spearman,
    stars,
    stratified_bootstrap_means,
    wilcoxon_signed_rank,
)

REPO = Path(__file__).resolve().parents[2]


def flags(b: int, c: int, concordant: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Before/after flags with b items flagged only before and c only after."""
    before = [1] * b + [0] * c + [1] * concordant + [0] * concordant
    after = [0] * b + [1] * c + [1] * concordant + [0] * concordant
    return np.array(before, bool), np.array(after, bool)


@pytest.mark.parametrize(("b", "c", "p"), [
    (1, 5, 0.21875),   # 2 * (1 + 6) / 2**6
    (5, 1, 0.21875),
    (3, 0, 0.25),      # 2 * (1/2)**3
    (2, 2, 1.0),
    (0, 1, 1.0),
    (0, 6, 0.03125),   # 2 * (1/2)**6
])
def test_exact_mcnemar_by_hand(b, c, p):
    result = mcnemar_exact(*flags(b, c))
    assert (result.b, result.c) == (b, c)
    assert result.p == pytest.approx(p, abs=1e-15)


def test_mcnemar_effect_sizes():
    result = mcnemar_exact(*flags(1, 5))
    assert result.odds_ratio == pytest.approx(0.2)
    assert result.cohens_g == pytest.approx(5 / 6 - 0.5)
    assert mcnemar_exact(*flags(3, 0)).odds_ratio == float("inf")


def test_mcnemar_without_discordant_pairs_is_p_one():
    result = mcnemar_exact(*flags(0, 0))
    assert result.p == 1.0 and np.isnan(result.odds_ratio) and np.isnan(result.cohens_g)


def test_mcnemar_equals_scipy_binomtest():
    rng = np.random.default_rng(1)
    before, after = rng.random(300) < 0.6, rng.random(300) < 0.45
    result = mcnemar_exact(before, after)
    b, c = int(np.sum(before & ~after)), int(np.sum(~before & after))
    assert result.p == stats.binomtest(b, b + c, 0.5).pvalue


@pytest.mark.parametrize("n", [8, 40, 300])
def test_wilcoxon_equals_scipy_with_zeros_and_ties(n):
    rng = np.random.default_rng(n)
    before = np.round(rng.normal(50, 5, n), 1)
    after = before + np.round(rng.normal(-1, 2, n), 0)  # integer steps: zeros and tied |d|
    expected = stats.wilcoxon(after, before)
    result = wilcoxon_signed_rank(after, before)
    assert result.p == expected.pvalue and result.statistic == expected.statistic


@pytest.mark.parametrize("n", range(1, 14))
def test_wilcoxon_equals_scipys_exact_sign_flip_test_on_small_samples(n):
    """Up to 13 differences with zeros or tied |d|, scipy runs an exact permutation test over every
    sign flip; ours counts the same null distribution from the ranks: the same p to the last digit.
    Scores as a group of a study has them: few pairs, 0/1 flags (many ties) and rounded soft scores."""
    rng = np.random.default_rng(n)
    cases = [(rng.integers(0, 2, n), rng.integers(0, 2, n)), (rng.integers(0, 4, n), rng.integers(0, 4, n)),
             (np.round(rng.normal(0, 1, n), 1), np.round(rng.normal(0, 1, n), 1))]
    cases.append((cases[2][0], cases[2][0] + rng.choice([-1.0, 0.0, 1.0, 2.0], n)))  # zeros and ties at once
    for after, before in cases[:2 if n >= 12 else 4]:  # scipy's own test takes 0.7 s at n = 12, 1.4 s at 13
        if not np.any(after != before):
            continue
        expected, result = stats.wilcoxon(after, before), wilcoxon_signed_rank(after, before)
        assert (result.p, result.statistic) == (expected.pvalue, expected.statistic), (after, before)


def test_wilcoxon_all_zero_differences_is_p_one_without_warning():
    values = np.array([50.0, 48.5, 52.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = wilcoxon_signed_rank(values, values)
    assert result.p == 1.0 and np.isnan(result.effect)
    assert wilcoxon_signed_rank([3.0], [3.0]).p == 1.0  # scipy raises for this one


def test_rank_biserial_by_hand():
    # d = [1, -2, 3, 0]: zero dropped, ranks 1, 2, 3; R+ = 4, R- = 2; r = (4 - 2) / 6
    result = wilcoxon_signed_rank([1.0, 0.0, 3.0, 5.0], [0.0, 2.0, 0.0, 5.0])
    assert result.effect == pytest.approx(1 / 3)
    assert wilcoxon_signed_rank([2.0, 3.0], [1.0, 1.0]).effect == 1.0


def test_paired_ttest_equals_scipy_and_cohens_dz():
    rng = np.random.default_rng(3)
    before = rng.normal(50, 5, 60)
    after = before + rng.normal(-0.5, 2, 60)
    expected = stats.ttest_rel(after, before)
    result = paired_ttest(after, before)
    assert result.p == expected.pvalue and result.statistic == expected.statistic
    d = after - before
    assert result.effect == pytest.approx(d.mean() / d.std(ddof=1))
    assert paired_ttest([1.0, 2.0, 4.0], [0.0, 0.0, 0.0]).effect == pytest.approx(7 / 3 / np.std([1, 2, 4], ddof=1))


def test_paired_ttest_degenerate_inputs():
    assert paired_ttest([5.0, 6.0], [5.0, 6.0]).p == 1.0
    assert np.isnan(paired_ttest([5.0], [4.0]).p)


def test_bootstrap_is_deterministic_under_a_seed():
    d = np.random.default_rng(0).normal(1, 3, 150)
    first = bootstrap_mean_ci(d, np.random.default_rng(42), 2000)
    assert np.array_equal(first, bootstrap_mean_ci(d, np.random.default_rng(42), 2000))
    assert not np.array_equal(first, bootstrap_mean_ci(d, np.random.default_rng(43), 2000))


def test_bootstrap_interval_matches_normal_theory():
    d = np.random.default_rng(5).normal(2, 4, 400)
    low, high = bootstrap_mean_ci(d, np.random.default_rng(0), 10_000)
    half = 1.96 * d.std(ddof=1) / np.sqrt(len(d))
    assert low == pytest.approx(d.mean() - half, abs=0.05 * half)
    assert high == pytest.approx(d.mean() + half, abs=0.05 * half)


def test_bootstrap_columns_share_the_resampled_items():
    d = np.random.default_rng(6).normal(0, 1, 50)
    ci = bootstrap_mean_ci(np.column_stack([d, 3 * d]), np.random.default_rng(1), 500)
    assert ci.shape == (2, 2)
    np.testing.assert_allclose(ci[:, 1], 3 * ci[:, 0])
    np.testing.assert_array_equal(bootstrap_mean_ci(np.full(10, 2.5), np.random.default_rng(0), 100), [2.5, 2.5])


def test_bootstrap_blocks_large_samples():
    """Above the memory bound the resamples are drawn in several blocks; all are filled."""
    d = np.arange(30_000, dtype=float) % 7
    low, high = bootstrap_mean_ci(d, np.random.default_rng(0), 400)  # 5e6 // 30e3 = 166 per block
    assert low < d.mean() < high and high - low < 0.1


def test_holm_by_hand():
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 -> 0.02, 0.03, 0.06, 0.04 -> running max
    adjusted = adjust_pvalues([0.01, 0.04, 0.03, 0.005], "holm")
    np.testing.assert_allclose(adjusted, [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(adjust_pvalues([0.5, 0.6], "holm"), [1.0, 1.0])


@pytest.mark.parametrize("seed", range(5))
def test_bh_equals_scipy_false_discovery_control(seed):
    p = np.random.default_rng(seed).random(12) ** 3
    p[3] = p[7]  # a tie
    np.testing.assert_allclose(adjust_pvalues(p, "bh"), stats.false_discovery_control(p, method="bh"), rtol=1e-14)


def test_adjustment_leaves_undefined_tests_out_of_the_family():
    adjusted = adjust_pvalues([0.01, np.nan, 0.04], "holm")
    np.testing.assert_allclose(adjusted, [0.02, np.nan, 0.04])
    with pytest.raises(ValueError, match="unknown correction"):
        adjust_pvalues([0.1], "bonferroni")


@pytest.mark.parametrize(("p", "mark"), [
    (0.05, ""), (0.0499, "*"), (0.01, "*"), (0.0099, "**"), (0.001, "**"), (0.0009, "***"), (float("nan"), ""),
])
def test_stars(p, mark):
    assert stars(p) == mark


def test_bonferroni_and_spearman():
    """The one Spearman (GRUFF's and Lou's correlations): rho as scipy's, p exact up to 8 values,
    scipy's above; undefined is None."""
    assert bonferroni([0.01, None, 0.4]) == [0.02, None, 0.8]
    a, b = list(range(12)), [2, 1, 4, 3, 5, 0, 6, 8, 7, 11, 9, 10]
    result = spearman(a, b)
    assert result.rho == pytest.approx(stats.spearmanr(a, b).statistic)
    assert result.p == pytest.approx(stats.spearmanr(a, b).pvalue) and result.n == 12
    # rho = 1 - 6 * sum d^2 / (n (n^2 - 1))
    assert spearman([1, 2, 3], [30, 20, 10]).rho == pytest.approx(-1.0)
    four = spearman([1, 2, 3, 4], [1, 3, 2, 4])
    assert four.rho == pytest.approx(0.8) and four.n == 4  # 1 - 6*2/(4*15)
    # exact two-sided p: of the 24 pairings, |rho| >= 0.8 for rho = 1, 0.8 (3 ways: one adjacent
    # swap), -0.8 (3 ways) and -1: 8 / 24
    assert four.p == pytest.approx(8 / 24)
    six = spearman(range(6), range(6))
    assert six.rho == pytest.approx(1.0) and six.p == pytest.approx(2 / 720)  # rho = +1 or -1
    assert spearman([1, 1, 1], [1, 2, 3]).to_dict() == {"n": 3, "rho": None, "p": None}


def test_bootstrap_statistic_of_a_non_mean_figure():
    """A change of a median: the interval covers it, no change gives p 1, a clear shift a small p."""
    before = np.arange(20, dtype=float)

    def draw(shift):
        def statistic(rng):
            idx = rng.integers(0, 20, 20)
            return float(np.median(before[idx])), float(np.median(before[idx] + shift))
        return statistic

    same = bootstrap_statistic(draw(0.0), np.random.default_rng(0), 500)
    assert same.p == 1.0 and same.ci == (0.0, 0.0)
    shifted = bootstrap_statistic(draw(3.0), np.random.default_rng(0), 500)
    assert shifted.ci == (3.0, 3.0) and shifted.p == 0.0
    interval = bootstrap_interval(lambda rng: float(np.median(before[rng.integers(0, 20, 20)])),
                                  np.random.default_rng(0), 500)
    assert interval.ci[0] <= np.median(before) <= interval.ci[1] and interval.se > 0


def test_stratified_bootstrap_keeps_strata_and_pairing():
    rng = np.random.default_rng(0)
    strata = [np.column_stack([x, 2 * x]) for x in (rng.normal(0, 1, 7), rng.normal(5, 1, 30))]
    means = stratified_bootstrap_means(strata, np.random.default_rng(1), 300)
    assert means.shape == (300, 2, 2)
    np.testing.assert_allclose(means[:, :, 1], 2 * means[:, :, 0])  # one draw for both columns
    assert abs(means[:, 1, 0].mean() - strata[1][:, 0].mean()) < 0.1  # strata are not mixed
    constant = stratified_bootstrap_means([np.full((4, 1), 3.0)], np.random.default_rng(0), 10)
    np.testing.assert_array_equal(constant, np.full((10, 1, 1), 3.0))
    with pytest.raises(ValueError, match="empty"):
        stratified_bootstrap_means([np.zeros((0, 2))], np.random.default_rng(0), 10)


@pytest.mark.parametrize(("changes", "p"), [([-1.0] * 99 + [1.0], 0.02), ([1.0, -1.0], 1.0), ([0.0] * 5, 1.0),
                                             ([2.0] * 10, 0.0), ([0.5] * 10, 0.0)])
def test_bootstrap_p_is_twice_the_smaller_tail(changes, p):
    assert bootstrap_p(changes) == pytest.approx(p)


def test_mcnemar_counts_flags_given_as_numbers_and_keeps_the_counts_without_discordant_pairs():
    as_floats = mcnemar_exact([1.0, 1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 1.0, 1.0, 0.0])
    assert as_floats == mcnemar_exact([True, True, False, True, False], [False, False, True, True, False])
    assert (as_floats.b, as_floats.c) == (2, 1)
    none = mcnemar_exact(*flags(0, 0))
    assert (none.b, none.c) == (0, 0)
    even = mcnemar_exact(*flags(2, 2))  # discordant both ways as often: no change, and an odds ratio of 1
    assert (even.p, even.odds_ratio, even.cohens_g) == (1.0, 1.0, 0.0)


@pytest.mark.parametrize("test", [mcnemar_exact, wilcoxon_signed_rank, paired_ttest, spearman])
def test_paired_samples_must_be_equally_long_and_one_dimensional(test):
    with pytest.raises(ValueError, match=r"^paired samples must be 1-d and equally long: \(\d+,\) vs \(\d+,\)$"):
        test([1.0, 0.0, 1.0], [1.0, 0.0])
    with pytest.raises(ValueError, match=r"^paired samples must be 1-d and equally long: \(1, 3\) vs \(1, 3\)$"):
        test([[1.0, 0.0, 1.0]], [[0.0, 1.0, 1.0]])


def test_sign_test_counts_the_signs_of_the_non_zero_differences():
    # 0.2, 0.5, 2 and 3 above 0, -0.5 below, 0 left out: the binomial test of 4 in 5 at 1/2
    assert sign_test([0.5, 2.0, -0.5, 0.0, 3.0, 0.2]) == stats.binomtest(4, 5, 0.5).pvalue == 0.375
    assert sign_test([-0.25, -1.0, -2.0]) == stats.binomtest(0, 3, 0.5).pvalue
    assert sign_test([0.0, 0.0]) == sign_test([]) == 1.0
    before, after = flags(1, 5)
    assert sign_test(after.astype(int) - before.astype(int)) == mcnemar_exact(before, after).p


def test_the_degenerate_tests_say_what_they_can():
    assert wilcoxon_signed_rank([2.0, 3.0], [2.0, 3.0]).statistic == 0.0
    constant = paired_ttest([5.0, 6.0], [5.0, 6.0])
    assert (constant.statistic, constant.p) == (0.0, 1.0) and np.isnan(constant.effect)
    single = paired_ttest([5.0], [4.0])
    assert all(isinstance(value, float) and np.isnan(value) for value in (single.statistic, single.p, single.effect))
    two = paired_ttest([5.0, 7.0], [4.0, 4.5])
    assert (two.statistic, two.p) == (stats.ttest_rel([5.0, 7.0], [4.0, 4.5]).statistic,
                                      stats.ttest_rel([5.0, 7.0], [4.0, 4.5]).pvalue)
    # every difference the same: d_z is undefined; small differences (SD below 1) still have one
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's t of a zero SD
        assert np.isnan(paired_ttest([2.0, 3.0, 4.0], [1.0, 2.0, 3.0]).effect)
    assert paired_ttest([0.1, 0.2, 0.3], [0.0, 0.0, 0.0]).effect == pytest.approx(0.2 / 0.1)


def _exact_spearman_p(a, b) -> float:
    """The two-sided exact p of Spearman's rho by counting every pairing."""
    from itertools import permutations

    ra, rb = stats.rankdata(a), stats.rankdata(b)
    orders = np.array(list(permutations(rb))) - rb.mean()
    rhos = np.abs(orders @ (ra - ra.mean())) / np.sqrt((orders**2).sum(axis=1) * ((ra - ra.mean())**2).sum())
    return float(np.mean(rhos >= abs(stats.spearmanr(ra, rb).statistic) - 1e-12))


def test_spearman_p_is_exact_for_an_odd_number_and_for_eight_values():
    five = spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])
    assert five.rho == pytest.approx(0.8) and five.p == pytest.approx(_exact_spearman_p(range(5), [2, 1, 4, 3, 5]))
    b = [2, 1, 4, 3, 6, 5, 8, 7]
    assert spearman(range(8), b).p == pytest.approx(_exact_spearman_p(range(8), b))
    assert spearman(range(8), b).p != pytest.approx(stats.spearmanr(range(8), b).pvalue)


def test_spearman_leaves_out_pairs_with_a_missing_value_and_needs_spread():
    result = spearman([1, 2, float("nan"), 4, 5], [1, 2, 3, float("nan"), 7])
    assert (result.n, result.rho) == (3, pytest.approx(1.0))
    assert spearman([1, 2, 3], [0.0, 0.5, 1.0]).rho == pytest.approx(1.0)  # a range of exactly 1 is spread
    flags, more = [True, False, True, True, False], [False, False, True, True, True]  # 0/1 flags as booleans
    assert spearman(flags, more) == spearman([float(f) for f in flags], [float(m) for m in more])


def test_corrections_are_capped_at_one_and_holm_is_the_default():
    np.testing.assert_allclose(adjust_pvalues([0.6, 0.7], "holm"), [1.0, 1.0])
    np.testing.assert_allclose(adjust_pvalues([0.7, 0.8, 0.9], "bh"), [0.9, 0.9, 0.9])
    np.testing.assert_allclose(adjust_pvalues([0.01, 0.04, 0.03]), adjust_pvalues([0.01, 0.04, 0.03], "holm"))
    assert bonferroni([0.6, 0.7]) == [1.0, 1.0]


def test_bootstrap_mean_ci_is_the_percentile_interval_of_these_draws():
    """Results depend only on the generator's state: one draw of n items per resample, in order."""
    d = np.random.default_rng(2).normal(0, 1, 25)
    idx = np.random.default_rng(9).integers(0, 25, size=(300, 25))
    expected = np.quantile(d[idx].mean(axis=1), [0.05, 0.95])
    np.testing.assert_allclose(bootstrap_mean_ci(d, np.random.default_rng(9), 300, level=0.9), expected, rtol=1e-12)
    np.testing.assert_array_equal(bootstrap_mean_ci(d.astype(np.float32), np.random.default_rng(9), 300, 0.9),
                                  bootstrap_mean_ci(d.astype(np.float32).astype(float), np.random.default_rng(9),
                                                    300, 0.9))
    assert bootstrap_mean_ci([4.0], np.random.default_rng(0), 10).tolist() == [4.0, 4.0]
    with pytest.raises(ValueError, match="^cannot bootstrap an empty sample$"):
        bootstrap_mean_ci([], np.random.default_rng(0), 10)


def test_stratified_bootstrap_draws_each_stratum_in_blocks_in_order():
    """30,000 items a stratum take 166 resamples a block (5M values): three blocks for 400 resamples,
    drawn one stratum after the other."""
    small = np.arange(5, dtype=float)
    large = np.arange(30_000, dtype=np.float32) % 7
    means = stratified_bootstrap_means([small, large], np.random.default_rng(4), 400)
    rng = np.random.default_rng(4)
    expected_small = small[rng.integers(0, 5, size=(400, 5))].mean(axis=1)
    expected_large = np.concatenate([large.astype(float)[rng.integers(0, 30_000, size=(stop - start, 30_000))].mean(axis=1)
                                     for start, stop in ((0, 166), (166, 332), (332, 400))])
    np.testing.assert_allclose(means[:, 0, 0], expected_small, rtol=1e-12)
    np.testing.assert_allclose(means[:, 1, 0], expected_large, rtol=1e-12)
    with pytest.raises(ValueError, match="^cannot bootstrap an empty stratum$"):
        stratified_bootstrap_means([], np.random.default_rng(0), 10)


def _counter(values):
    """A statistic that returns `values` in turn, one per resample (the generator is not used)."""
    found = iter(values)
    return lambda rng: next(found)


def test_bootstrap_interval_and_change_read_percentiles_and_sd_of_the_defined_resamples():
    values = [float(v) for v in range(100)]
    result = bootstrap_interval(_counter(values), np.random.default_rng(0), 100, level=0.9)
    assert result == BootstrapResult(pytest.approx((4.95, 94.05)), pytest.approx(np.std(values, ddof=1)))
    # undefined on some resamples: left out; on one: no SD; on none: nothing
    assert bootstrap_interval(_counter([None, 3.0, None]), np.random.default_rng(0), 3) == \
        BootstrapResult((3.0, 3.0), None)
    assert bootstrap_interval(_counter([None] * 3), np.random.default_rng(0), 3) == BootstrapResult((None, None), None)
    assert bootstrap_interval(_counter([1.0, None, 3.0]), np.random.default_rng(0), 3).se == pytest.approx(2**0.5)
    pairs = [(0.0, v) for v in values]
    change = bootstrap_statistic(_counter(pairs), np.random.default_rng(0), 100, level=0.9)
    assert change == BootstrapResult(pytest.approx((4.95, 94.05)), pytest.approx(np.std(values, ddof=1)),
                                     bootstrap_p(values))
    assert bootstrap_statistic(_counter([None, (1.0, None), (2.0, 1.5)]), np.random.default_rng(0), 3) == \
        BootstrapResult((-0.5, -0.5), None, 0.0)
    assert bootstrap_statistic(_counter([None, (None, 1.0)]), np.random.default_rng(0), 2) == \
        BootstrapResult((None, None), None, None)
    assert bootstrap_statistic(_counter([(0.0, 1.0), (0.0, 3.0)]), np.random.default_rng(0), 2).se == \
        pytest.approx(2**0.5)


def test_a_cells_generator_depends_on_the_seed_and_the_names_only():
    draw = cell_rng(7, "gay", "acc").integers(0, 1_000_000, 3).tolist()
    assert draw == cell_rng(7, "gay", "acc").integers(0, 1_000_000, 3).tolist()
    assert draw != cell_rng(8, "gay", "acc").integers(0, 1_000_000, 3).tolist()
    assert draw != cell_rng(7, "acc", "gay").integers(0, 1_000_000, 3).tolist()
    # the draws of earlier versions, so that a rerun reproduces published intervals
    assert draw == np.random.default_rng([7, 377505249]).integers(0, 1_000_000, 3).tolist()


def test_statistics_become_json_values():
    assert [finite_or_none(v) for v in (None, 1, np.float32(0.5), float("nan"), float("inf"), -np.inf)] == [
        None, 1.0, 0.5, None, None, None]
    assert json_safe({"name": "gay", "missing": None, "ci": [0.5, float("nan")], "n": np.int64(3), "flag": True,
                      "p": np.float64(0.01), "odds": float("inf")}) == {
        "name": "gay", "missing": None, "ci": [0.5, None], "n": 3, "flag": 1.0, "p": 0.01, "odds": None}
    assert isinstance(json_safe({"n": np.int64(3)})["n"], int)


def test_the_documented_interval_and_signed_rank_test_that_disagree():
    """docs/compare.md's example of a percentile bootstrap interval of the mean change that excludes 0 while the
    Wilcoxon signed-rank test finds nothing: 29 small rises against 11 large falls, with the numbers the doc
    gives (the interval as `compare` draws an overall entry's: `cell_rng(seed)`, 10,000 resamples)."""
    rises, falls = 0.05 + 0.02 * np.arange(29), -(1.9 + 0.2 * np.arange(11))
    d = np.round(np.concatenate([rises, falls]), 2)
    before = np.full(len(d), 50.0)
    text = (REPO / "docs" / "compare.md").read_text().split("**When the interval and the test disagree.**")[1]
    assert "(+0.05, +0.07, …, +0.61) and 11 whose soft score fell a lot (−1.9,\n−2.1, …, −3.9)" in text
    low, high = bootstrap_mean_ci(d, cell_rng(0), 10_000)
    wilcoxon = wilcoxon_signed_rank(before + d, before)
    figures = (f"Δsoft = mean(d) = {d.mean():.2f}, 95% interval [{low:.2f}, {high:.2f}]".replace("-", "−"),
               f"Wilcoxon p = {wilcoxon.p:.3f}", f"sum R⁻ = {wilcoxon.statistic:.0f}",
               f"R⁺ = {d.size * (d.size + 1) / 2 - wilcoxon.statistic:.0f}", f"median change is +{np.median(d):.2f}",
               f"p = {paired_ttest(before + d, before).p:.3f}, in line", f"(p = {sign_test(d):.3f})")
    assert [figure for figure in figures if figure not in text.replace("\n", " ")] == []
    assert high < 0 and wilcoxon.p > 0.5
