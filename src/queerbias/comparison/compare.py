"""Paired before/after comparison of two or more runs of one suite: the delta document.

For each AFTER run against BEFORE, the suite's `paired_cells` say which entries are
tested (overall, and per scope: identity groups, settings, strategies, ...) and with
which measures. Every entry goes through the same statistics (`paired_stats`): binary
measures the exact McNemar test, continuous ones the Wilcoxon signed-rank (or paired t)
test, statistic measures a paired bootstrap test; all get paired bootstrap intervals,
and p-values are corrected (Holm or BH) across the entries of a scope, per measure.

Every delta.json has one shape: `suite`, `schema_version`, `measures`, `scopes`,
`comparisons` (each with `before`, `after`, `overall` and one mapping per scope),
`meta`, and with checkpoints `trajectory` and `best`. An entry's keys per measure m:
`m_before`, `m_after`, `delta_m`, `ci_m`, `p_m`, `p_m_adj`, `stars_m`; binary measures add
the discordant counts `b`, `c`, `odds_ratio`, `cohens_g` (suffixed `_m` when a suite has
several binary measures), continuous ones `m_statistic` and `effect_m`.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from queerbias.comparison import checkpoints, delta_plots, delta_tables
from queerbias.comparison.runs import align_rows, benchmark_name, check_compatible
from queerbias.errors import QueerbiasError
from queerbias.fileio import atomic_write, dump_json_strict
from queerbias.report import paired_stats
from queerbias.report.options import SOFT_TESTS, CompareOptions
from queerbias.report.paired_stats import (
    adjust_pvalues,
    bonferroni,
    bootstrap_mean_ci,
    bootstrap_statistic,
    cell_rng,
    finite_or_none,
    json_safe,
    mcnemar_exact,
    stars,
)
from queerbias.suites.protocol import BINARY, CONTINUOUS, OVERALL, STATISTIC, PairedItems
from queerbias.suites.provenance import package_versions
from queerbias.suites.registry import get_suite
from queerbias.suites.store import RunRecord

DELTA_SCHEMA_VERSION = 2


def soft_test(name: str):
    """The function of a paired test of continuous measures (`report.options.SOFT_TESTS`): f(after, before)."""
    return getattr(paired_stats, SOFT_TESTS[name].function)


def compare_runs(before: RunRecord, afters: list[RunRecord], options: CompareOptions = CompareOptions(),
                 checkpoints_from: int = checkpoints.MIN_CHECKPOINTS) -> dict:
    """The delta document for BEFORE against each AFTER, with a trajectory and the best checkpoint when
    at least `checkpoints_from` AFTER runs carry a training step (a training run's own report: from one).

    `options.best` names one of the suite's criteria (None: its first); any other name is refused,
    as are AFTER checkpoints that do not come after BEFORE's step. Without a seed, the bootstrap's is 0.
    The document's `benchmark` names what was evaluated where the runs are one training run's evaluations
    of a benchmark (`runs.benchmark_name`), so that the report's title says which benchmark it is.
    """
    if not afters:
        raise QueerbiasError("need at least one AFTER run")
    options = options.seeded(0)
    suite = before.suite
    check_best(suite, options.best)
    check_order(before, afters)
    compared = [compare_pair(before, after, options) for after in afters]
    comparisons = [comparison for comparison, _ in compared]
    _adjust_extras(comparisons)
    scopes = list(dict.fromkeys(scope for _, seen in compared for scope in seen))
    test = SOFT_TESTS[options.soft_test]
    document = {
        "suite": suite.name,
        "schema_version": DELTA_SCHEMA_VERSION,
        "benchmark": benchmark_name([before, *afters]),
        "measures": [asdict(m) for m in suite.measures],
        "scopes": scopes,
        "comparisons": comparisons,
        "meta": {
            "bias_test": "exact McNemar test, scipy.stats.binomtest(b, b + c, 0.5)",
            "bias_effect": "odds ratio b/c and Cohen's g",
            "soft_test": options.soft_test,
            "soft_test_description": test.description,
            "soft_effect": test.effect,
            "statistic_test": "paired bootstrap over units: two-sided p = 2 min(P*(Δ ≤ 0), P*(Δ ≥ 0))",
            "correction": options.correction,
            "correction_family": "the entries of one scope per measure; overall uncorrected",
            "ci": f"paired percentile bootstrap, {options.ci_level:.0%}",
            "n_resamples": options.resamples,
            "seed": options.seed,
            "ci_level": options.ci_level,
            "data": before.meta.get("data"),
            "settings": before.meta.get("settings"),
            "scoring_id": before.meta.get("scoring_id"),
            "versions": package_versions(),
            "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        },
    }
    trajectory = checkpoints.trajectory(before, comparisons, [m.name for m in suite.measures], suite.figures,
                                        checkpoints_from)
    if trajectory is not None and suite.criteria:
        document["trajectory"] = trajectory
        document["best"] = best_checkpoint(document, options.best, options.ppl_margin)
    return document


def best_checkpoint(document: dict, criterion: str | None, ppl_margin_pct: float,
                    refused: dict[int, str] | None = None) -> dict:
    """The best checkpoint of a delta document with a trajectory, by `criterion` (None: the suite's
    first): a checkpoint the criterion refuses (`Criterion.refuses`) or whose step `refused`
    names (a guard benchmark of the same run, `guard_refusals`) is never chosen."""
    suite = get_suite(document["suite"])
    name = criterion or next(iter(suite.criteria))
    rule = suite.criteria[name]
    own = {}
    if rule.refuses is not None:
        for comparison in document["comparisons"]:
            step = comparison["after"].get("step")
            reason = rule.refuses(comparison) if step is not None else None
            if reason:
                own[step] = reason
    return checkpoints.choose_best(document["trajectory"], name, ppl_margin_pct, suite.criteria,
                                   own | (refused or {}))


def check_best(suite, criterion: str | None) -> None:
    """A best-checkpoint criterion must be one the suite declares; never silently replaced."""
    if criterion is not None and criterion not in suite.criteria:
        known = ", ".join(suite.criteria) or "none"
        raise QueerbiasError(f"best-checkpoint criterion {criterion!r} is not one of suite {suite.name} "
                             f"(its criteria: {known})")


def check_order(before: RunRecord, afters: list[RunRecord]) -> None:
    """Checkpoints compared with BEFORE must come after it: given in reverse order, the untrained base
    would be an AFTER run and could be reported as the best checkpoint."""
    start = before.step
    for after in afters:
        if after.step is not None and start is not None and after.step <= start:
            raise QueerbiasError(f"{after.label} (step {after.step}) does not come after {before.label} (step "
                                 f"{start}); give BEFORE first, then the later checkpoints")


def compare_pair(before: RunRecord, after: RunRecord, options: CompareOptions) -> tuple[dict, list[str]]:
    """One comparison entry (AFTER against BEFORE: overall, per scope with p corrected within the
    scope, and the suite's extras) and its scopes in order."""
    check_compatible(before, after)
    suite = before.suite
    aligned = align_rows(before.rows(), after.rows(), suite.key_columns, suite.text_columns,
                         (before.label, after.label))
    comparison, scopes = {"before": before.describe(), "after": after.describe(), OVERALL: None}, []
    for entry in suite.paired_cells(*aligned, before.settings):
        names = () if entry.scope == OVERALL else (entry.scope, entry.name)
        stats = entry_stats(entry, suite, options, cell_rng(options.seed, *names))
        if entry.scope == OVERALL:
            comparison[OVERALL] = stats
        else:
            if entry.scope not in scopes:
                scopes.append(entry.scope)
            comparison.setdefault(entry.scope, {})[entry.name] = stats
    if comparison[OVERALL] is None:
        raise QueerbiasError(f"{before.label} and {after.label} share nothing that could be compared")
    _adjust(comparison, scopes, suite, options.correction)
    extras = suite.extras(*aligned, options, before.settings)
    clash = set(extras) & set(comparison)
    if clash:
        raise ValueError(f"{suite.name}: extras {sorted(clash)} would replace parts of the comparison")
    comparison |= extras
    check_declared(suite, comparison, f"{after.label} against {before.label}")
    return comparison, scopes


def check_declared(suite, comparison: dict, where: str) -> None:
    """Refuse a comparison without a part its suite declares (`Declaration.parts`), or without a figure its
    `judged` names in a part it holds (a measure m: its `m_before`, or the list of names m): a study would find
    no column to judge by, and judge nothing."""
    missing = [repr(part) for part in suite.parts if part not in comparison]
    missing += [f"{figure.measure!r} of {figure.part!r}" for figure in suite.judged.declared()
                if isinstance(comparison.get(figure.part), dict)
                and not {f"{figure.measure}_before", figure.measure} & set(comparison[figure.part])]
    if missing:
        raise QueerbiasError(f"{where}: the {suite.name} comparison lacks {missing[0]}, which the suite's declaration "
                             "names (parts, judged); a study would judge nothing by it")


def _adjust_extras(comparisons: list[dict]) -> None:
    """Bonferroni across the AFTER runs for every extra figure that carries a single p-value."""
    names = {name for c in comparisons for name, value in c.items() if isinstance(value, dict) and "p" in value
             and name not in ("before", "after")}
    for name in names:
        entries = [c[name] for c in comparisons if name in c]
        for entry, adjusted in zip(entries, bonferroni([e["p"] for e in entries]), strict=True):
            entry["p_bonferroni"] = adjusted


def entry_stats(entry: PairedItems, suite, options: CompareOptions, rng: np.random.Generator) -> dict:
    """Scores before/after, deltas, tests and intervals of every measure of one entry."""
    measures = [m for m in suite.measures if m.name in entry.values]
    paired = [m for m in measures if m.kind != STATISTIC]
    lengths = {len(entry.values[m.name][0]) for m in paired} | {len(entry.values[m.name][1]) for m in paired}
    if len(lengths) > 1:
        raise ValueError(f"{entry.scope}/{entry.name}: measures over different numbers of items {sorted(lengths)}")
    short = sum(m.kind == BINARY for m in suite.measures) == 1
    stats = {"n": lengths.pop() if lengths else entry.statistics[measures[0].name][0]}
    diffs = []
    for m in measures:
        key = m.name
        if m.kind == BINARY:
            before, after = (np.asarray(v, dtype=bool) for v in entry.values[key])
            test = mcnemar_exact(before, after)
            suffix = "" if short else f"_{key}"
            stats |= _common(key, 100.0 * before.mean(), 100.0 * after.mean())
            stats |= {f"b{suffix}": test.b, f"c{suffix}": test.c, f"p_{key}": test.p, f"p_{key}_adj": None,
                      f"stars_{key}": "", f"odds_ratio{suffix}": test.odds_ratio, f"cohens_g{suffix}": test.cohens_g}
            diffs.append(100.0 * (after.astype(float) - before))
        elif m.kind == CONTINUOUS:
            before, after = (np.asarray(v, dtype=float) for v in entry.values[key])
            test = soft_test(options.soft_test)(after, before)
            stats |= _common(key, before.mean(), after.mean())
            stats |= {f"{key}_statistic": test.statistic, f"p_{key}": test.p, f"p_{key}_adj": None,
                      f"stars_{key}": "", f"effect_{key}": test.effect}
            diffs.append(after - before)
    if diffs:
        ci = bootstrap_mean_ci(np.column_stack(diffs), rng, options.resamples, options.ci_level)
        for index, m in enumerate(paired):
            stats[f"ci_{m.name}"] = [ci[0, index], ci[1, index]]
    for m in measures:
        if m.kind == STATISTIC:
            value_before, value_after = entry.values[m.name]
            result = bootstrap_statistic(entry.statistics[m.name][1], rng, options.resamples, options.ci_level)
            stats |= _common(m.name, value_before, value_after)
            stats |= {f"ci_{m.name}": list(result.ci), f"p_{m.name}": result.p, f"p_{m.name}_adj": None,
                      f"stars_{m.name}": ""}
    return json_safe(stats)


def _common(key: str, before: float, after: float) -> dict:
    return {f"{key}_before": before, f"{key}_after": after, f"delta_{key}": after - before, f"ci_{key}": None}


def _adjust(comparison: dict, scopes: list[str], suite, correction: str) -> None:
    """Adjust p across the entries of each scope, per measure; overall is its own single test."""
    families = [comparison[scope] for scope in scopes]
    for m in suite.measures:
        key = f"p_{m.name}"
        for entries in families:
            tested = [e for e in entries.values() if key in e]
            raw = [np.nan if e[key] is None else e[key] for e in tested]
            for entry, adjusted in zip(tested, adjust_pvalues(raw, correction), strict=True):
                entry[f"{key}_adj"] = finite_or_none(adjusted)
        if key in comparison[OVERALL]:
            comparison[OVERALL][f"{key}_adj"] = comparison[OVERALL][key]
    for entry in [comparison[OVERALL], *(e for entries in families for e in entries.values())]:
        for m in suite.measures:
            if f"p_{m.name}_adj" in entry:
                p = entry[f"p_{m.name}_adj"]
                entry[f"stars_{m.name}"] = "" if p is None else stars(p)


def write_outputs(document: dict, out_dir: Path | str) -> list[Path]:
    """Write the tables, plots and finally delta.json, so that delta.json means "complete".

    Trajectory files (and a levels plot) of an earlier comparison in the same directory are
    removed when this one has none, so no reader mixes two comparisons.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "delta.json").unlink(missing_ok=True)
    text = dump_json_strict(document, "delta document")
    files = {f"delta.{kind}": body for kind, body in delta_tables.render_delta_tables(document).items()}
    if "trajectory" in document:
        files["trajectory.csv"] = delta_tables.render_trajectory_csv(document)
    paths = []
    for name, body in files.items():
        paths.append(out_dir / name)
        atomic_write(paths[-1], body)
    paths.append(delta_plots.forest_plot(document, out_dir / "forest.png"))
    levels = delta_plots.levels_plot(document, out_dir / "levels.png")
    if levels is not None:
        paths.append(levels)
    else:
        (out_dir / "levels.png").unlink(missing_ok=True)
    if "trajectory" in document:
        paths.append(delta_plots.trajectory_plot(document, out_dir / "trajectory.png"))
    else:
        for stale in ("trajectory.csv", "trajectory.png"):
            (out_dir / stale).unlink(missing_ok=True)
    paths.append(out_dir / "delta.json")
    atomic_write(paths[-1], text)
    return paths
