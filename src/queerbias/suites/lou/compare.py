"""Before/after on the LM view: did a mitigation narrow the gap to gender-fair German?

For each strategy the paired unit is one text pair (original, reformulation) scored by
both models. The change of Δ (after − before; positive = the reformulation gained
relative to its original) is tested with the Wilcoxon signed-rank test and the
change of the preference flag with the exact McNemar test, both from
`queerbias.report.paired_stats`, with Holm (or BH) correction across the strategies
of one scope (a task, or all tasks pooled over distinct text pairs).
"""

from __future__ import annotations

import json
import zlib
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
    mcnemar_exact,
    stars,
    wilcoxon_signed_rank,
)
from queerbias.scoring.results import package_versions
from queerbias.suites.lou import plots, report
from queerbias.suites.lou.lm_view import POOLED

KEYS = ["task", "index", "strategy", "pair_key"]
STRATEGY_TESTS = ("delta", "pref")


@dataclass(frozen=True)
class LouRun:
    """A finished LM-view directory: its label, summary and item rows."""

    label: str
    path: Path
    summary: dict

    def items(self) -> pd.DataFrame:
        return pd.read_csv(self.path / "items.csv", dtype={"pair_key": str})

    def describe(self) -> dict:
        model = self.summary["meta"]["model"]
        return {"label": self.label, "path": str(self.path), "model": model.get("spec"),
                "fingerprint": model.get("fingerprint"), **{k: self.summary["meta"][k] for k in ("step",)
                                                             if k in self.summary["meta"]}}


def load_run(label: str, path: str | Path) -> LouRun:
    path = Path(path)
    summary_file = path / "summary.json"
    if not summary_file.is_file():
        raise QueerbiasError(f"{path} holds no summary.json: not a finished `queerbias lou lm` run")
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    if summary.get("meta", {}).get("view") != "lm":
        raise QueerbiasError(f"{path} is not an LM-view run (queerbias lou lm); compare needs LM-view runs")
    return LouRun(label, path, summary)


def compare_runs(before: LouRun, afters: list[LouRun], options: CompareOptions | None = None) -> dict:
    """The delta document: for each AFTER, per scope and strategy, paired statistics against BEFORE."""
    if not afters:
        raise QueerbiasError("need at least one AFTER run")
    options = options or CompareOptions()
    before_items = _compared(before.items())
    comparisons = []
    for after in afters:
        _check_compatible(before, after)
        merged = before_items.merge(_compared(after.items()), on=KEYS, suffixes=("_before", "_after"))
        if merged.empty:
            raise QueerbiasError(f"{before.path} and {after.path} share no compared text pairs")
        scopes = {task: items for task, items in merged.groupby("task", sort=True)}
        scopes[POOLED] = merged.drop_duplicates(["strategy", "pair_key"])
        comparisons.append({
            "before": before.describe(), "after": after.describe(),
            "scopes": {scope: _scope_stats(items, scope, options) for scope, items in scopes.items()},
        })
    return {"comparisons": comparisons, "meta": {
        "delta": "mean log-likelihood of the reformulation minus the original's (per token; PLL for masked LMs)",
        "delta_test": "Wilcoxon signed-rank, scipy.stats.wilcoxon(after, before) defaults; effect: rank-biserial r",
        "pref_test": "exact McNemar on 'reformulation preferred' flags; b: preferred before only, c: after only",
        "correction": options.correction, "correction_family": "the strategies of one scope, per test",
        "ci": f"paired percentile bootstrap, {options.ci_level:.0%}", **asdict(options),
        "versions": package_versions(), "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }}


def _compared(items: pd.DataFrame) -> pd.DataFrame:
    """Rows with a Δ (neither identical nor too long), reduced to what the comparison needs."""
    kept = items[items["delta"].notna()]
    return kept[KEYS + ["delta"]].assign(pref=kept["delta"] > 0)


def _check_compatible(before: LouRun, after: LouRun) -> None:
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


def _scope_stats(items: pd.DataFrame, scope: str, options: CompareOptions) -> dict:
    entries = {strategy: _strategy_stats(group, options, _rng(options.seed, scope, strategy))
               for strategy, group in items.groupby("strategy", sort=False)}
    for test in STRATEGY_TESTS:
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


def _rng(seed: int, scope: str, strategy: str) -> np.random.Generator:
    """One generator per cell, so an interval does not depend on which other cells exist."""
    return np.random.default_rng([seed, zlib.crc32(f"{scope}|{strategy}".encode())])


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
