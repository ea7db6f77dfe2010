"""The pair suite's distance to indifference in a comparison: its change, interval and table.

The distance is the mean over identity groups of |score - 50| (bias and soft score;
`scoring.aggregate.distance_to_indifference` for one run), the figure a mitigation
should lower where the overall score hides groups that lean in opposite directions.
Its change gets a group-stratified paired bootstrap: pairs are resampled within each
group (group sizes fixed, before and after from the same draw).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from queerbias.report.formatting import format_p, stars_of, with_ci
from queerbias.report.options import CompareOptions
from queerbias.report.paired_stats import bootstrap_p, cell_rng, json_safe, stratified_bootstrap_means
from queerbias.report.tables import Cell, Table, fmt


def distance_extra(before: pd.DataFrame, after: pd.DataFrame, options: CompareOptions) -> dict:
    """The comparison's `distance` entry for two aligned pair runs."""
    aligned = pd.DataFrame({"group": before["group"], "biased_before": before["biased"],
                            "biased_after": after["biased"], "soft_before": before["soft"],
                            "soft_after": after["soft"]})
    return distance_stats(aligned, options, cell_rng(options.seed, "distance to indifference"))


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
    resampled = np.abs(stratified_bootstrap_means(strata, rng, options.resamples) - 50.0).mean(axis=1)
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


def distance_table(comparison: dict) -> Table:
    """Distance to indifference before and after, with the change's bootstrap interval and p."""
    d = comparison["distance"]
    rows = [[score, fmt(d[f"{key}_before"]), fmt(d[f"{key}_after"]),
             Cell(with_ci(d[f"delta_{key}"], d[f"ci_{key}"]), marks=stars_of(d[f"p_{key}"])), format_p(d[f"p_{key}"])]
            for score, key in (("bias score", "bias"), ("soft score", "soft"))]
    return Table(header=["Distance to indifference", "before", "after", "Δ [95% CI]", "p"], rows=rows,
                 caption=f"{comparison['after']['label']} against {comparison['before']['label']}: "
                         f"mean over {d['n_groups']} groups of |score - 50| (0 = every group indifferent)",
                 notes="Interval and p from a paired bootstrap of pairs within groups; a fall is a mitigation.")
