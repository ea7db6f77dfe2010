"""Before/after comparison of GRUFF runs: did a mitigation change pronoun fidelity?

Items are paired by (replicate, item_id), so both runs must come from the same
templates and generation settings. Per setting (and per setting and pronoun set)
the accuracy change is tested with the exact McNemar test on the correct flags,
with a paired bootstrap interval and p-values adjusted (Holm by default) within each
comparison, as `queerbias compare` does for bias scores. The occupations' accusative
stereotype scores of the two models are correlated (paper Fig. 8; Spearman,
Bonferroni across AFTER runs).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from queerbias.errors import QueerbiasError
from queerbias.fileio import atomic_write
from queerbias.report.compare import CompareOptions, finite_or_none
from queerbias.report.paired_stats import (
    adjust_pvalues,
    bootstrap_mean_ci,
    cell_rng,
    mcnemar_exact,
    stars,
)
from queerbias.scoring.results import package_versions
from queerbias.suites.gruff.api import read_items
from queerbias.suites.gruff.forms import PRONOUN_SETS
from queerbias.suites.gruff.generation import SETTINGS
from queerbias.suites.gruff.metrics import bonferroni, stereotype_correlation
from queerbias.suites.gruff.plots import accuracy_plot
from queerbias.suites.gruff.report import render_compare

KEY = ["replicate", "item_id"]


@dataclass(frozen=True)
class GruffRun:
    """A finished `run_gruff` directory and the label it gets in tables."""

    label: str
    path: Path
    summary: dict

    @property
    def meta(self) -> dict:
        return self.summary["meta"]

    def items(self) -> pd.DataFrame:
        return read_items(self.path / "items.csv")

    def describe(self) -> dict:
        info = {"label": self.label, "path": str(self.path), "model": self.meta["model"].get("spec"),
                "fingerprint": self.meta["model"].get("fingerprint")}
        info.update({k: self.meta[k] for k in ("step", "perplexity") if k in self.meta})
        return info


def load_gruff_run(path: Path | str, label: str | None = None) -> GruffRun:
    path = Path(path)
    summary_path = path / "summary.json"
    if not summary_path.is_file() or not (path / "items.csv").is_file():
        raise QueerbiasError(f"{path}: no finished GRUFF run (summary.json and items.csv)")
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    if summary.get("meta", {}).get("suite") != "gruff":
        raise QueerbiasError(f"{path}: summary.json is not from a GRUFF run")
    return GruffRun(label or path.name, path, summary)


def check_compatible(before: GruffRun, after: GruffRun) -> None:
    """Same templates and generation settings, hence the same items."""
    for key in ("templates", "generation"):
        a, b = before.meta[key], after.meta[key]
        if key == "templates":
            a, b = a["checksum"], b["checksum"]
        if a != b:
            raise QueerbiasError(f"{before.path} and {after.path} differ in {key} ({a} vs {b}); "
                                 "paired tests need the same items")


def paired_accuracy(before, after, rng: np.random.Generator, options: CompareOptions) -> dict:
    """Accuracy before/after (%), its change with a bootstrap interval, exact McNemar test."""
    before, after = np.asarray(before, dtype=bool), np.asarray(after, dtype=bool)
    test = mcnemar_exact(before, after)
    ci = bootstrap_mean_ci(100.0 * (after.astype(float) - before), rng, options.n_resamples, options.ci_level)
    acc_before, acc_after = 100 * before.mean(), 100 * after.mean()
    return {"n": len(before), "before": float(acc_before), "after": float(acc_after),
            "delta": float(acc_after - acc_before), "ci": [float(ci[0]), float(ci[1])], "b": test.b, "c": test.c,
            "p": test.p, "odds_ratio": finite_or_none(test.odds_ratio), "cohens_g": finite_or_none(test.cohens_g)}


def _adjust(entries: list[dict], correction: str) -> None:
    for entry, adjusted in zip(entries, adjust_pvalues([e["p"] for e in entries], correction), strict=True):
        entry["p_adj"] = float(adjusted)
        entry["stars"] = stars(entry["p_adj"])


def compare_pair(before: GruffRun, after: GruffRun, before_items: pd.DataFrame, options: CompareOptions) -> dict:
    check_compatible(before, after)
    merged = before_items.merge(after.items(), on=KEY, suffixes=("_before", "_after"), validate="one_to_one")
    if len(merged) != len(before_items):
        raise QueerbiasError(f"{after.path}: only {len(merged)} of {len(before_items)} items match {before.path}")
    flags = ("correct_before", "correct_after")
    overall = paired_accuracy(*(merged[f] for f in flags), cell_rng(options.seed, "overall"), options)
    overall.update(p_adj=overall["p"], stars=stars(overall["p"]))
    settings, cells = {}, {}
    for setting in SETTINGS:
        part = merged[merged["setting_before"] == setting]
        if part.empty:
            continue
        settings[setting] = paired_accuracy(*(part[f] for f in flags), cell_rng(options.seed, setting), options)
        cells[setting] = {p: paired_accuracy(*(part.loc[part["target_before"] == p, f] for f in flags),
                                             cell_rng(options.seed, setting, p), options)
                          for p in PRONOUN_SETS if (part["target_before"] == p).any()}
    _adjust(list(settings.values()), options.correction)
    _adjust([entry for row in cells.values() for entry in row.values()], options.correction)
    return {"before": before.describe(), "after": after.describe(), "overall": overall, "settings": settings,
            "cells": cells, "model_correlation": stereotype_correlation(before_items, after.items(), "acc")}


def compare_gruff(before: GruffRun, afters: list[GruffRun], options: CompareOptions | None = None) -> dict:
    """The delta document of BEFORE against each AFTER (default options: Holm, 10,000 resamples)."""
    options = options or CompareOptions()
    if not afters:
        raise QueerbiasError("need at least one AFTER run")
    before_items = before.items()
    comparisons = [compare_pair(before, after, before_items, options) for after in afters]
    correlations = [c["model_correlation"] for c in comparisons]
    for entry, adjusted in zip(correlations, bonferroni([c["p"] for c in correlations]), strict=True):
        entry["p_bonferroni"] = adjusted
    return {
        "comparisons": comparisons,
        "meta": {
            "suite": "gruff",
            "test": "exact McNemar test on correct flags, scipy.stats.binomtest(b, b + c, 0.5)",
            "correction": options.correction,
            "correction_family": "settings of one comparison; separately the setting x pronoun cells",
            "ci": f"paired percentile bootstrap, {options.ci_level:.0%}",
            "n_resamples": options.n_resamples, "seed": options.seed,
            "templates": before.meta["templates"], "generation": before.meta["generation"],
            "versions": package_versions(),
            "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "options": asdict(options),
        },
    }


def write_compare(document: dict, runs: list[GruffRun], out_dir: Path | str) -> list[Path]:
    """delta.md/.csv/.tex and accuracy.png, then delta.json last (its presence means complete)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "delta.json").unlink(missing_ok=True)
    paths = []
    for ext, text in render_compare(document).items():
        paths.append(out_dir / f"delta.{ext}")
        atomic_write(paths[-1], text)
    before = runs[0]
    panels = [(f"{after.label} vs {before.label}",
               [(before.label, before.summary["settings"]), (after.label, after.summary["settings"])])
              for after in runs[1:]]
    paths.append(accuracy_plot(panels, out_dir / "accuracy.png"))
    atomic_write(out_dir / "delta.json", json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    paths.append(out_dir / "delta.json")
    return paths
