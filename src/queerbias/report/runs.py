"""Loading finished `queerbias score` directories and checking two runs are comparable.

A paired comparison is only valid on the same items scored the same way, so runs are
refused when their data checksum or scoring configuration differ, and items are
matched by `pair_id` and sentence text rather than by row order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from queerbias.errors import QueerbiasError

TEXT_COLUMNS = ("pair_id", "group", "counterfactual_group", "category", "sent_more", "sent_less")
REQUIRED_COLUMNS = ("pair_id", "group", "sent_more", "sent_less", "biased", "soft")


@dataclass(frozen=True)
class ScoreRun:
    """One finished score directory: its label for tables, summary and (lazily) pairs."""

    label: str
    path: Path
    summary: dict

    @property
    def meta(self) -> dict:
        return self.summary.get("meta", {})

    @property
    def step(self) -> int | None:
        """Training step of a checkpoint run, None for a plain model."""
        return self.meta.get("step")

    @property
    def perplexity(self) -> float | None:
        return self.meta.get("perplexity")

    def describe(self) -> dict:
        """Identification of the run for delta.json: label, path, model fingerprint."""
        model = self.meta.get("model", {})
        info = {"label": self.label, "path": str(self.path), "model": model.get("spec"),
                "fingerprint": model.get("fingerprint")}
        for key in ("step", "perplexity"):
            if key in self.meta:
                info[key] = self.meta[key]
        return info

    def pairs(self) -> pd.DataFrame:
        """The per-pair scores, text columns kept as strings (an empty category stays "")."""
        path = self.path / "pairs.csv"
        if not path.is_file():
            raise QueerbiasError(f"{self.path}: no pairs.csv; is this a `queerbias score` output directory?")
        present = pd.read_csv(path, nrows=0).columns
        missing = [c for c in REQUIRED_COLUMNS if c not in present]
        if missing:
            raise QueerbiasError(f"{path}: missing column(s) {', '.join(missing)}")
        dtypes = {c: str for c in TEXT_COLUMNS if c in present}
        frame = pd.read_csv(path, dtype=dtypes, keep_default_na=False)
        duplicated = frame["pair_id"][frame["pair_id"].duplicated()]
        if len(duplicated):
            raise QueerbiasError(f"{path}: duplicate pair_id {duplicated.iloc[0]!r}")
        return frame


def parse_run_arg(arg: str) -> tuple[str | None, Path]:
    """Split a `LABEL=DIR` argument; a plain DIR has no explicit label."""
    label, sep, path = arg.partition("=")
    if sep and label and "/" not in label and not Path(arg).is_dir():
        return label, Path(path)
    return None, Path(arg)


def load_run(path: Path | str, label: str | None = None) -> ScoreRun:
    """Load a finished score directory; a run without summary.json did not finish."""
    path = Path(path)
    if not path.is_dir():
        raise QueerbiasError(f"{path}: not a directory")
    summary_path = path / "summary.json"
    if not summary_path.is_file():
        raise QueerbiasError(f"{path}: no summary.json, the scoring run did not finish")
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise QueerbiasError(f"{summary_path}: not valid JSON ({err})") from err
    if "overall" not in summary or "groups" not in summary:
        raise QueerbiasError(f"{summary_path}: not a score summary (no 'overall'/'groups')")
    return ScoreRun(label or path.resolve().name, path, summary)


def load_runs(specs: list[tuple[str | None, Path]]) -> list[ScoreRun]:
    """Load (label or None, directory) runs; labels (default: directory name) must be unique."""
    runs = [load_run(path, label) for label, path in specs]
    labels = [run.label for run in runs]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise QueerbiasError(
            f"several runs are labelled {', '.join(duplicates)}; name them as LABEL=DIR"
        )
    return runs


def check_compatible(before: ScoreRun, after: ScoreRun) -> None:
    """Refuse runs scored on different data or with a different scoring configuration."""
    checks = (
        ("data checksum", ("data", "checksum")),
        ("scoring configuration (scoring_id)", ("scoring_id",)),
    )
    for what, keys in checks:
        values = [_nested(run.meta, keys) for run in (before, after)]
        for run, value in zip((before, after), values, strict=True):
            if value is None:
                raise QueerbiasError(f"{run.path}: summary.json meta has no {what}")
        if values[0] != values[1]:
            raise QueerbiasError(
                f"cannot compare {before.label} with {after.label}: {what} differs "
                f"({before.label}: {values[0]}, {after.label}: {values[1]})"
            )


def align_pairs(before: pd.DataFrame, after: pd.DataFrame, labels: tuple[str, str]) -> pd.DataFrame:
    """Join two runs' pairs on pair_id, requiring the same items with the same texts.

    Returns one row per item: pair_id, group and the suffixed `biased_*`/`soft_*`
    columns (`_before`, `_after`), in the BEFORE run's order.
    """
    ids_before, ids_after = set(before["pair_id"]), set(after["pair_id"])
    if ids_before != ids_after:
        only_before = sorted(ids_before - ids_after)
        only_after = sorted(ids_after - ids_before)
        raise QueerbiasError(
            f"{labels[0]} and {labels[1]} scored different items: "
            f"{len(only_before)} only in {labels[0]} {only_before[:3]}, "
            f"{len(only_after)} only in {labels[1]} {only_after[:3]}"
        )
    keep = ["pair_id", "group", "sent_more", "sent_less", "biased", "soft"]
    merged = before[keep].merge(after[keep], on="pair_id", suffixes=("_before", "_after"), validate="1:1")
    for column in ("sent_more", "sent_less", "group"):
        differs = merged[merged[f"{column}_before"] != merged[f"{column}_after"]]
        if len(differs):
            row = differs.iloc[0]
            raise QueerbiasError(
                f"{labels[0]} and {labels[1]} differ in {column} for {len(differs)} item(s), "
                f"e.g. pair_id {row['pair_id']}: {row[f'{column}_before']!r} vs {row[f'{column}_after']!r}"
            )
    return merged.rename(columns={"group_before": "group"})[
        ["pair_id", "group", "biased_before", "biased_after", "soft_before", "soft_after"]
    ]


def _nested(mapping: dict, keys: tuple[str, ...]):
    for key in keys:
        if not isinstance(mapping, dict):
            return None
        mapping = mapping.get(key)
    return mapping
