"""The options of a before/after comparison, declared once.

`queerbias compare` builds its flags from `CompareOptions`, a training config reads it as
its `compare` section and the Python API's `compare(...)` takes its fields by name, so
the three accept and refuse the same values with the same limits (issue 30). Light: the
CLI imports this module to build its parser; the tests behind `soft_test` are looked up
in `report.paired_stats` by the names listed here when a comparison runs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from queerbias.options import MAX_SEED, option, validate

#: a million resamples per cell already takes minutes
MAX_RESAMPLES = 1_000_000


@dataclass(frozen=True)
class SoftTest:
    """A paired test of continuous measures: what `paired_stats` implements it and how reports name it."""

    function: str  # the name of its function in `report.paired_stats`: f(after, before) -> PairedTestResult
    description: str
    effect: str


SOFT_TESTS = {
    "wilcoxon": SoftTest("wilcoxon_signed_rank", "Wilcoxon signed-rank test, scipy.stats.wilcoxon(after, before) "
                                                 "defaults", "matched-pairs rank-biserial r"),
    "ttest": SoftTest("paired_ttest", "paired t-test, scipy.stats.ttest_rel(after, before)", "Cohen's d_z"),
}
#: p-value corrections across the entries of a scope (`paired_stats.adjust_pvalues`)
CORRECTIONS = {"holm": "Holm", "bh": "Benjamini-Hochberg"}


@dataclass(frozen=True)
class CompareOptions:
    """Test choices and the best-checkpoint rule; recorded in delta.json so a table can be traced to them."""

    soft_test: str = option("wilcoxon", "paired test on continuous scores", choices=tuple(SOFT_TESTS))
    correction: str = option("holm", "p-value correction across the entries of a scope: holm (family-wise) or "
                                     "bh (false discovery rate)", choices=tuple(CORRECTIONS))
    resamples: int = option(10_000, "bootstrap resamples", ge=1, le=MAX_RESAMPLES)
    seed: int | None = option(None, "bootstrap seed (null: 0; in a training run, the run's seed)", ge=0, le=MAX_SEED)
    best: str | None = option(None, "best-checkpoint criterion of the runs' suite (`queerbias suites` lists them); "
                                    "null: the suite's first")
    ppl_margin: float = option(5.0, "exclude checkpoints whose perplexity rose more than this many percent over "
                                    "the base", ge=0)
    #: the level of every bootstrap interval
    ci_level: ClassVar[float] = 0.95

    def __post_init__(self):
        validate(self)

    def seeded(self, seed: int = 0) -> CompareOptions:
        """These options with `seed` where none was given."""
        return self if self.seed is not None else replace(self, seed=seed)
