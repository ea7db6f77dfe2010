"""The pair suite's distance to indifference in a comparison: its change, interval and table.

The distance is the mean over identity groups of |score - 50| (bias and soft score;
`suites.pairs.aggregate.distance_to_indifference` for one run), the figure a mitigation
should lower where the overall score hides groups that lean in opposite directions.
Its change gets a group-stratified paired bootstrap: pairs are resampled within each
group (group sizes fixed, before and after from the same draw). Beside the binary distance,
from the same draws, its noise floor (`suites.pairs.floor`): the coin-flip expectation for
the group sizes (`floor`), the distance above it (`over`) and the % of groups whose exact
interval contains 50 (`containing`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from queerbias.report.formatting import format_p, stars_of, with_ci
from queerbias.report.options import CompareOptions
from queerbias.report.paired_stats import bootstrap_p, cell_rng, json_safe, stratified_bootstrap_means
from queerbias.report.tables import Cell, Table, fmt
from queerbias.suites.pairs.floor import LEVEL, containing, distance_floor
from queerbias.suites.pairs.parts import DISTANCE


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
    means = np.array([s.mean(axis=0) for s in strata])
    draws = stratified_bootstrap_means(strata, rng, options.resamples)
    sizes = [len(s) for s in strata]
    floor = distance_floor(sizes)
    # per figure: (before, after) observed and (resamples, 2) resampled
    figures = {"bias": (np.abs(means[:, :2] - 50.0).mean(axis=0), np.abs(draws[:, :, :2] - 50.0).mean(axis=1)),
               "soft": (np.abs(means[:, 2:] - 50.0).mean(axis=0), np.abs(draws[:, :, 2:] - 50.0).mean(axis=1))}
    figures["over"] = (figures["bias"][0] - floor, figures["bias"][1] - floor)
    figures["containing"] = (containing(means[:, :2], sizes), containing(draws[:, :, :2], sizes))
    alpha = (1 - options.ci_level) / 2
    stats = {"n_groups": len(strata), "floor": floor, "containing_level": LEVEL}
    for name, (observed, resampled) in figures.items():
        changes = resampled[:, 1] - resampled[:, 0]
        low, high = np.quantile(changes, [alpha, 1 - alpha])
        stats.update({
            f"{name}_before": observed[0], f"{name}_after": observed[1], f"delta_{name}": observed[1] - observed[0],
            f"ci_{name}": [low, high], f"p_{name}": bootstrap_p(changes),
        })
    return json_safe(stats)


def distance_table(comparison: dict) -> Table:
    """Distance to indifference before and after, with the change's bootstrap interval and p."""
    d = comparison[DISTANCE]
    figures = [("bias score", "bias"), ("soft score", "soft")]
    notes = "Interval and p from a paired bootstrap of pairs within groups; a fall is a mitigation."
    if d.get("floor") is not None:  # reports written before the noise floor have none
        figures[1:1] = [(f"bias score above its coin-flip floor ({d['floor']:.2f})", "over"),
                        ("% of groups whose 95% interval contains 50", "containing")]
        notes += (f" Coin-flip floor: the distance a model choosing at random per pair scores on average for these "
                  f"group sizes (E|bias - 50| under Binomial(n, 1/2), exact), {d['floor']:.2f}; below it the "
                  "distance mostly measures sampling noise. Interval: exact (Clopper-Pearson).")
    rows = [[score, fmt(d[f"{key}_before"]), fmt(d[f"{key}_after"]),
             Cell(with_ci(d[f"delta_{key}"], d[f"ci_{key}"]), marks=stars_of(d[f"p_{key}"])), format_p(d[f"p_{key}"])]
            for score, key in figures]
    return Table(header=["Distance to indifference", "before", "after", "Δ [95% CI]", "p"], rows=rows,
                 caption=f"{comparison['after']['label']} against {comparison['before']['label']}: "
                         f"mean over {d['n_groups']} groups of |score - 50| (0 = every group indifferent)",
                 notes=notes)
