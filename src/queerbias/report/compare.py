"""Paired before/after comparison of score runs, per identity group and overall.

Builds the delta document (written as delta.json) that every other output renders:
for each AFTER run against BEFORE, the change of bias and soft score with exact
McNemar / Wilcoxon (or paired t) tests, paired bootstrap intervals and p-values
corrected across the groups of that comparison.
"""

from __future__ import annotations

import json
import math
import platform
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import scipy

from queerbias import __version__
from queerbias.report import checkpoints, delta_tables, plots
from queerbias.report.choices import CORRECTIONS
from queerbias.report.paired_stats import (
    adjust_pvalues,
    bootstrap_mean_ci,
    bootstrap_p,
    cell_rng,
    mcnemar_exact,
    paired_ttest,
    stars,
    stratified_bootstrap_means,
    wilcoxon_signed_rank,
)
from queerbias.report.runs import ScoreRun, align_pairs, check_compatible

#: implementation, description and effect size of each of `choices.SOFT_TESTS`
SOFT_TESTS = {
    "wilcoxon": (wilcoxon_signed_rank, "Wilcoxon signed-rank test, scipy.stats.wilcoxon(after, before) defaults",
                 "matched-pairs rank-biserial r"),
    "ttest": (paired_ttest, "paired t-test, scipy.stats.ttest_rel(after, before)", "Cohen's d_z"),
}


@dataclass(frozen=True)
class CompareOptions:
    """Test choices; recorded in delta.json so a table can be traced to its settings."""

    soft_test: str = "wilcoxon"
    correction: str = "holm"
    n_resamples: int = 10_000
    seed: int = 0
    ci_level: float = 0.95

    def __post_init__(self):
        if self.soft_test not in SOFT_TESTS:
            raise ValueError(f"unknown soft test {self.soft_test!r}; expected one of {sorted(SOFT_TESTS)}")
        if self.correction not in CORRECTIONS:
            raise ValueError(f"unknown correction {self.correction!r}; expected one of {CORRECTIONS}")
        if self.n_resamples < 1:
            raise ValueError("n_resamples must be at least 1")


def group_stats(pairs: pd.DataFrame, options: CompareOptions, rng: np.random.Generator) -> dict:
    """All paired statistics of one group: scores before/after, deltas, tests, intervals.

    `pairs` holds aligned items (columns biased_before/after, soft_before/after).
    """
    biased_before = pairs["biased_before"].to_numpy(dtype=bool)
    biased_after = pairs["biased_after"].to_numpy(dtype=bool)
    soft_before = pairs["soft_before"].to_numpy(dtype=float)
    soft_after = pairs["soft_after"].to_numpy(dtype=float)

    mcnemar = mcnemar_exact(biased_before, biased_after)
    soft_test = SOFT_TESTS[options.soft_test][0](soft_after, soft_before)
    diffs = np.column_stack([100.0 * (biased_after.astype(float) - biased_before), soft_after - soft_before])
    ci = bootstrap_mean_ci(diffs, rng, options.n_resamples, options.ci_level)

    bias_before, bias_after = 100.0 * biased_before.mean(), 100.0 * biased_after.mean()
    stats = {
        "n": len(pairs),
        "bias_before": bias_before,
        "bias_after": bias_after,
        "delta_bias": bias_after - bias_before,
        "ci_bias": [ci[0, 0], ci[1, 0]],
        "b": mcnemar.b,
        "c": mcnemar.c,
        "p_bias": mcnemar.p,
        "odds_ratio": mcnemar.odds_ratio,
        "cohens_g": mcnemar.cohens_g,
        "soft_before": soft_before.mean(),
        "soft_after": soft_after.mean(),
        "delta_soft": soft_after.mean() - soft_before.mean(),
        "ci_soft": [ci[0, 1], ci[1, 1]],
        "soft_statistic": soft_test.statistic,
        "p_soft": soft_test.p,
        "effect_soft": soft_test.effect,
    }
    return json_safe(stats)


def distance_stats(pairs: pd.DataFrame, options: CompareOptions, rng: np.random.Generator) -> dict:
    """Change of the distance to indifference (mean over groups of |score - 50|), bias and soft.

    The interval resamples pairs within each group (group sizes fixed, before and after
    from the same draw), recomputes both distances and takes percentiles of their change.
    """
    strata = [np.column_stack([100.0 * items["biased_before"].to_numpy(dtype=float),
                               100.0 * items["biased_after"].to_numpy(dtype=float),
                               items["soft_before"].to_numpy(dtype=float),
                               items["soft_after"].to_numpy(dtype=float)])
              for _, items in sorted(pairs.groupby("group", sort=False), key=lambda kv: kv[0])]
    observed = np.abs(np.array([s.mean(axis=0) for s in strata]) - 50.0).mean(axis=0)
    resampled = np.abs(stratified_bootstrap_means(strata, rng, options.n_resamples) - 50.0).mean(axis=1)
    changes = resampled[:, [1, 3]] - resampled[:, [0, 2]]
    alpha = (1 - options.ci_level) / 2
    low, high = np.quantile(changes, [alpha, 1 - alpha], axis=0)
    stats = {"n_groups": len(strata)}
    for j, name in enumerate(("bias", "soft")):
        stats.update({
            f"{name}_before": observed[2 * j], f"{name}_after": observed[2 * j + 1],
            f"delta_{name}": observed[2 * j + 1] - observed[2 * j],
            f"ci_{name}": [low[j], high[j]], f"p_{name}": bootstrap_p(changes[:, j]),
        })
    return json_safe(stats)


def compare_pair(before: ScoreRun, after: ScoreRun, before_pairs: pd.DataFrame, options: CompareOptions) -> dict:
    """One comparison entry: AFTER against BEFORE, overall and per group, p corrected across groups."""
    check_compatible(before, after)
    aligned = align_pairs(before_pairs, after.pairs(), (before.label, after.label))
    overall = group_stats(aligned, options, cell_rng(options.seed))
    groups = {
        name: group_stats(items, options, cell_rng(options.seed, name))
        for name, items in sorted(aligned.groupby("group", sort=False), key=lambda kv: kv[0])
    }
    _add_adjusted(overall, groups, options.correction)
    distance = distance_stats(aligned, options, cell_rng(options.seed, "distance to indifference"))
    return {"before": before.describe(), "after": after.describe(), "overall": overall, "groups": groups,
            "distance": distance}


def compare_runs(
    before: ScoreRun,
    afters: list[ScoreRun],
    options: CompareOptions = CompareOptions(),
    best_criterion: str = "closest50",
    ppl_margin_pct: float = 5.0,
) -> dict:
    """The delta document for BEFORE against each AFTER, with a trajectory when checkpoints are given."""
    if not afters:
        raise ValueError("need at least one AFTER run")
    before_pairs = before.pairs()
    comparisons = [compare_pair(before, after, before_pairs, options) for after in afters]
    soft_name, soft_effect = SOFT_TESTS[options.soft_test][1:]
    document = {
        "comparisons": comparisons,
        "meta": {
            "bias_test": "exact McNemar test, scipy.stats.binomtest(b, b + c, 0.5)",
            "bias_effect": "odds ratio b/c and Cohen's g",
            "soft_test": options.soft_test,
            "soft_test_description": soft_name,
            "soft_effect": soft_effect,
            "correction": options.correction,
            "correction_family": "groups of one comparison, separately for bias and soft; overall uncorrected",
            "ci": f"paired percentile bootstrap, {options.ci_level:.0%}",
            "distance": ("distance to indifference: unweighted mean over groups of |score - 50|; "
                         "interval: paired bootstrap of pairs within groups; p: twice the smaller share "
                         "of resampled changes on either side of 0"),
            **asdict(options),
            "data": before.meta.get("data"),
            "scoring_id": before.meta.get("scoring_id"),
            "versions": {"queerbias": __version__, "numpy": np.__version__, "scipy": scipy.__version__,
                         "pandas": pd.__version__, "python": platform.python_version()},
            "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        },
    }
    trajectory = checkpoints.trajectory(before, comparisons)
    if trajectory is not None:
        document["trajectory"] = trajectory
        document["best"] = checkpoints.choose_best(trajectory, best_criterion, ppl_margin_pct)
    return document


def write_outputs(document: dict, out_dir: Path | str) -> list[Path]:
    """Write the tables, plots and finally delta.json, so that delta.json means "complete".

    Trajectory files of an earlier comparison in the same directory are removed when
    this one has no checkpoints, so no reader mixes two comparisons.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "delta.json").unlink(missing_ok=True)
    texts = {f"delta.{kind}": text for kind, text in delta_tables.render_delta_tables(document).items()}
    if "trajectory" in document:
        texts["trajectory.csv"] = delta_tables.render_trajectory_csv(document["trajectory"])
    paths = []
    for name, text in texts.items():
        paths.append(out_dir / name)
        paths[-1].write_text(text, encoding="utf-8")
    paths.append(plots.forest_plot(document, out_dir / "forest.png"))
    if "trajectory" in document:
        paths.append(plots.trajectory_plot(document, out_dir / "trajectory.png"))
    else:
        for stale in ("trajectory.csv", "trajectory.png"):
            (out_dir / stale).unlink(missing_ok=True)
    partial = out_dir / "delta.json.partial"
    partial.write_text(json.dumps(document, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    paths.append(partial.replace(out_dir / "delta.json"))
    return paths


def _add_adjusted(overall: dict, groups: dict, correction: str) -> None:
    """Adjust p across the groups (one family per test); overall is its own single test."""
    for test in ("bias", "soft"):
        raw = [np.nan if g[f"p_{test}"] is None else g[f"p_{test}"] for g in groups.values()]
        for entry, adjusted in zip(groups.values(), adjust_pvalues(raw, correction), strict=True):
            entry[f"p_{test}_adj"] = finite_or_none(adjusted)
        overall[f"p_{test}_adj"] = overall[f"p_{test}"]
        for entry in (overall, *groups.values()):
            p = entry[f"p_{test}_adj"]
            entry[f"stars_{test}"] = "" if p is None else stars(p)


def finite_or_none(value):
    """A float for JSON, None where the statistic is undefined (NaN) or unbounded (inf)."""
    value = float(value)
    return value if math.isfinite(value) else None


def json_safe(stats: dict) -> dict:
    converted = {}
    for key, value in stats.items():
        if isinstance(value, list):
            converted[key] = [finite_or_none(v) for v in value]
        elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            converted[key] = int(value)
        else:
            converted[key] = finite_or_none(value)
    return converted
