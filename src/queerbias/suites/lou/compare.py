"""Before/after on Lou runs of one view: did a mitigation narrow the gap to gender-fair German?

LM view: the paired unit is one text pair (original, reformulation) scored by both
models. The change of Δ (after − before; positive = the reformulation gained relative
to its original) is tested with the Wilcoxon signed-rank test and the change of the
preference flag with the exact McNemar test.
Classifier view: the paired unit is one instance's reformulation predicted by both
classifiers; the "prediction flipped" and "prediction correct" flags are tested with
the exact McNemar test.
All statistics come from `queerbias.report.paired_stats`, with Holm (or BH)
correction across the strategies of one scope (a task; in the LM view also all tasks
pooled over distinct text pairs).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from queerbias.errors import QueerbiasError
from queerbias.fileio import atomic_write
from queerbias.report.compare import CompareOptions, finite_or_none, json_safe
from queerbias.report.paired_stats import (
    adjust_pvalues,
    bootstrap_mean_ci,
    cell_rng,
    mcnemar_exact,
    stars,
    wilcoxon_signed_rank,
)
from queerbias.scoring.results import package_versions
from queerbias.suites.lou import plots, report
from queerbias.suites.lou.data import ORIGINAL
from queerbias.suites.lou.lm_view import POOLED

KEYS = ["task", "index", "strategy", "pair_key"]
STRATEGY_TESTS = ("delta", "pref")


@dataclass(frozen=True)
class LouRun:
    """A finished LM-view or classifier-view directory: its label, summary and item rows."""

    label: str
    path: Path
    summary: dict

    @property
    def view(self) -> str:
        return self.summary["meta"]["view"]

    def items(self) -> pd.DataFrame:
        return pd.read_csv(self.path / "items.csv", dtype={"pair_key": str} if self.view == "lm" else None)

    def describe(self) -> dict:
        model = self.summary["meta"]["model"]
        return {"label": self.label, "path": str(self.path), "model": model.get("spec"),
                "fingerprint": model.get("fingerprint"), **{k: self.summary["meta"][k] for k in ("step",)
                                                             if k in self.summary["meta"]}}


@dataclass(frozen=True)
class _Design:
    """How one view's runs are paired and tested."""

    keys: list[str]
    tests: tuple[str, ...]
    prepare: Callable[[pd.DataFrame], pd.DataFrame]
    check: Callable[[LouRun, LouRun, pd.DataFrame, pd.DataFrame, pd.DataFrame], None]
    stats: Callable[[pd.DataFrame, CompareOptions, np.random.Generator], dict]
    pooled: bool
    meta: dict


def load_run(label: str, path: str | Path) -> LouRun:
    path = Path(path)
    summary_file = path / "summary.json"
    if not summary_file.is_file():
        raise QueerbiasError(f"{path} holds no summary.json: not a finished `queerbias lou lm` or `lou classify` run")
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    if summary.get("meta", {}).get("view") not in _DESIGNS:
        raise QueerbiasError(f"{path} is not an LM-view or classifier-view Lou run (queerbias lou lm|classify)")
    return LouRun(label, path, summary)


def compare_runs(before: LouRun, afters: list[LouRun], options: CompareOptions | None = None) -> dict:
    """The delta document: for each AFTER, per scope and strategy, paired statistics against BEFORE."""
    if not afters:
        raise QueerbiasError("need at least one AFTER run")
    options = options or CompareOptions()
    design = _DESIGNS[before.view]
    before_items = design.prepare(before.items())
    comparisons = []
    for after in afters:
        if after.view != before.view:
            raise QueerbiasError(f"{before.path} is a {before.view}-view run but {after.path} a {after.view}-view "
                                 "run; compare runs of one view")
        after_items = design.prepare(after.items())
        merged = before_items.merge(after_items, on=design.keys, suffixes=("_before", "_after"))
        design.check(before, after, before_items, after_items, merged)
        if merged.empty:
            raise QueerbiasError(f"{before.path} and {after.path} share no compared items")
        scopes = {task: items for task, items in merged.groupby("task", sort=True)}
        if design.pooled:
            scopes[POOLED] = merged.drop_duplicates(["strategy", "pair_key"])
        comparisons.append({
            "before": before.describe(), "after": after.describe(),
            "scopes": {scope: _scope_stats(items, scope, design, options) for scope, items in scopes.items()},
        })
    return {"comparisons": comparisons, "meta": {
        "view": before.view, **design.meta, "correction": options.correction, "correction_family": "the strategies of one scope, per test",
        "ci": f"paired percentile bootstrap, {options.ci_level:.0%}", **asdict(options),
        "versions": package_versions(), "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }}


def _compared(items: pd.DataFrame) -> pd.DataFrame:
    """Rows with a Δ (neither identical nor too long), reduced to what the comparison needs."""
    kept = items[items["delta"].notna()]
    return kept[KEYS + ["delta"]].assign(pref=kept["delta"] > 0)


def _check_lm(before: LouRun, after: LouRun, *_items) -> None:
    """Same scoring method and same data files, so Δs are comparable item by item."""
    for key in ("scoring_id",):
        if before.summary["meta"].get(key) != after.summary["meta"].get(key):
            raise QueerbiasError(f"{before.path} and {after.path} differ in {key}; "
                                 "compare runs scored the same way")
    data_before = {t["task"]: t["checksum"] for t in before.summary["meta"]["data"]["tasks"]}
    data_after = {t["task"]: t["checksum"] for t in after.summary["meta"]["data"]["tasks"]}
    changed = [t for t in data_before.keys() & data_after.keys() if data_before[t] != data_after[t]]
    if changed:
        raise QueerbiasError(f"the Lou files of {changed} differ between {before.path} and {after.path}")


def _scope_stats(items: pd.DataFrame, scope: str, design: _Design, options: CompareOptions) -> dict:
    entries = {strategy: design.stats(group, options, cell_rng(options.seed, scope, strategy))
               for strategy, group in items.groupby("strategy", sort=False)}
    for test in design.tests:
        raw = [np.nan if e[f"p_{test}"] is None else e[f"p_{test}"] for e in entries.values()]
        for entry, adjusted in zip(entries.values(), adjust_pvalues(raw, options.correction), strict=True):
            entry[f"p_{test}_adj"] = finite_or_none(adjusted)
            entry[f"stars_{test}"] = "" if entry[f"p_{test}_adj"] is None else stars(entry[f"p_{test}_adj"])
    return entries


def _strategy_stats(items: pd.DataFrame, options: CompareOptions, rng: np.random.Generator) -> dict:
    before, after = items["delta_before"].to_numpy(float), items["delta_after"].to_numpy(float)
    pref_before, pref_after = items["pref_before"].to_numpy(bool), items["pref_after"].to_numpy(bool)
    wilcoxon = wilcoxon_signed_rank(after, before)
    mcnemar = mcnemar_exact(pref_before, pref_after)
    ci = bootstrap_mean_ci(np.column_stack([after - before, 100.0 * (pref_after.astype(float) - pref_before)]),
                           rng, options.n_resamples, options.ci_level)
    stats = {
        "n": len(items), "delta_before": before.mean(), "delta_after": after.mean(),
        "change": (after - before).mean(), "ci_change": [ci[0, 0], ci[1, 0]],
        "statistic": wilcoxon.statistic, "p_delta": wilcoxon.p, "effect": wilcoxon.effect,
        "pref_before": 100.0 * pref_before.mean(), "pref_after": 100.0 * pref_after.mean(),
        "change_pref": 100.0 * (pref_after.mean() - pref_before.mean()), "ci_pref": [ci[0, 1], ci[1, 1]],
        "b": mcnemar.b, "c": mcnemar.c, "p_pref": mcnemar.p,
    }
    return json_safe(stats)


def _classified(items: pd.DataFrame) -> pd.DataFrame:
    """Reformulation rows with their flip and correctness flags (the original cannot flip)."""
    kept = items[items["strategy"] != ORIGINAL]
    return kept[["task", "index", "strategy", "flipped"]].assign(flipped=kept["flipped"].astype(bool),
                                                                   correct=kept["pred"] == kept["label"])


def _check_classifier(before: LouRun, after: LouRun, before_items: pd.DataFrame, after_items: pd.DataFrame,
                      merged: pd.DataFrame) -> None:
    """Same Lou files and the very same instances, so the flags pair up one to one."""
    if before.summary["meta"]["data"]["checksum"] != after.summary["meta"]["data"]["checksum"]:
        raise QueerbiasError(f"{before.path} and {after.path} were run on different Lou data (checksum or tasks "
                             "differ); compare classifier runs on the same items")
    if not len(merged) == len(before_items) == len(after_items):
        raise QueerbiasError(f"{before.path} and {after.path} hold different instances (--n, --seed or --task "
                             "differ); compare classifier runs on the same items")


def _classifier_stats(items: pd.DataFrame, options: CompareOptions, rng: np.random.Generator) -> dict:
    stats, changes = {"n": len(items)}, []
    for test, flag in (("flip", "flipped"), ("acc", "correct")):
        before, after = items[f"{flag}_before"].to_numpy(bool), items[f"{flag}_after"].to_numpy(bool)
        mcnemar = mcnemar_exact(before, after)
        changes.append(100.0 * (after.astype(float) - before))
        stats |= {f"{test}_before": 100.0 * before.mean(), f"{test}_after": 100.0 * after.mean(),
                  f"change_{test}": changes[-1].mean(), f"b_{test}": mcnemar.b, f"c_{test}": mcnemar.c,
                  f"p_{test}": mcnemar.p}
    ci = bootstrap_mean_ci(np.column_stack(changes), rng, options.n_resamples, options.ci_level)
    stats |= {"ci_flip": [ci[0, 0], ci[1, 0]], "ci_acc": [ci[0, 1], ci[1, 1]]}
    return json_safe(stats)


_DESIGNS = {
    "lm": _Design(KEYS, STRATEGY_TESTS, _compared, _check_lm, _strategy_stats, pooled=True, meta={
        "delta": "mean log-likelihood of the reformulation minus the original's (per token; PLL for masked LMs)",
        "delta_test": "Wilcoxon signed-rank, scipy.stats.wilcoxon(after, before) defaults; effect: rank-biserial r",
        "pref_test": "exact McNemar on 'reformulation preferred' flags; b: preferred before only, c: after only"}),
    "classifier": _Design(["task", "index", "strategy"], ("flip", "acc"), _classified, _check_classifier,
                          _classifier_stats, pooled=False, meta={
        "flip_test": "exact McNemar on 'predicted label differs from the original's' flags; "
                     "b: flipped before only, c: after only",
        "acc_test": "exact McNemar on 'prediction on the reformulation equals the gold label' flags; "
                    "b: correct before only, c: after only"}),
}


def write_outputs(document: dict, out_dir: str | Path) -> list[Path]:
    """delta.md/.csv/.tex and delta.png, then delta.json last (its presence means complete)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "delta.json").unlink(missing_ok=True)
    paths = []
    for ext, text in report.compare_outputs(document).items():
        paths.append(out_dir / f"delta.{ext}")
        atomic_write(paths[-1], text)
    paths.append(plots.compare_plot(document, out_dir / ".delta.png.tmp.png").replace(out_dir / "delta.png"))
    paths.append(out_dir / "delta.json")
    atomic_write(paths[-1], json.dumps(document, indent=2, allow_nan=False) + "\n")
    return paths
