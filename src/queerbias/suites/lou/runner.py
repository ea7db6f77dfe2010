"""Run a Lou view into an output directory: items.csv, plots, summary.md and, last, summary.json.

Same contract as the pair scorer: files are written atomically and summary.json comes
last, so a directory with a summary.json holds a finished run; a finished run with
the same model, data and settings is reused, a different one is never overwritten
silently.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import logging
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from queerbias.errors import QueerbiasError
from queerbias.fileio import atomic_write
from queerbias.models.loading import LoadedModel, load_model
from queerbias.scoring.results import package_versions
from queerbias.scoring.scorer import make_scorer
from queerbias.suites.lou import classifier as clf_view
from queerbias.suites.lou import lm_view, plots, report
from queerbias.suites.lou.data import (
    LouTask,
    load_task,
    lou_spec,
    resolve_tasks,
    sample_task,
)
from queerbias.suites.lou.metrics import spearman

log = logging.getLogger(__name__)


def run_lou(lm_or_spec: str | LoadedModel, data_dir: str | Path | None, out_dir: str | Path, *,
            tasks: Sequence[str] | None = None, n: int | None = None, seed: int = 0,
            batch_size: int | str = "auto", n_resamples: int = 10_000, overwrite: bool = False,
            progress: bool = True, extra_meta: dict | None = None, **load_options) -> dict:
    """LM view of Lou for one model; returns the summary (as written to summary.json).

    `data_dir` None reads the cache copy (downloaded on first use); `n` samples n
    instances per task (seeded). `extra_meta` (e.g. a checkpoint's step) goes into meta.
    """
    started = time.perf_counter()
    loaded_tasks = _load_tasks(tasks, data_dir, n, seed)
    lm = lm_or_spec if isinstance(lm_or_spec, LoadedModel) else load_model(lm_or_spec, **load_options)
    scoring = lm_view.lm_scoring_config(lm.kind)
    config = {"view": "lm", "scoring": scoring.to_dict(), "n": n, "seed": seed, "n_resamples": n_resamples,
              "preference": lm_view.PREFERENCE}
    out_dir, run_key = Path(out_dir), _run_key(lm.fingerprint, loaded_tasks, config)
    previous = _previous(out_dir, run_key, overwrite)
    if previous is not None:
        return previous
    strategies = lou_spec().strategies
    limit = lm_view.position_limit(lm)
    rows = lm_view.score_tasks(make_scorer(lm, scoring, batch_size), loaded_tasks, strategies, limit, progress)
    summary = lm_view.summarise(rows, [t.name for t in loaded_tasks], strategies, seed, n_resamples)
    summary["meta"] = _meta("lm", lm.describe(), loaded_tasks, config, run_key, started, extra_meta,
                            scoring_id=scoring.scoring_id, position_limit=limit)
    _write(out_dir, rows, lm_view.ITEM_COLUMNS, summary, report.lm_markdown, plots.lm_plot)
    return summary


def run_classifier(spec: str, data_dir: str | Path | None, out_dir: str | Path, *,
                   tasks: Sequence[str] | None = None, n: int | None = None, seed: int = 0,
                   max_length: int = clf_view.DEFAULT_MAX_LENGTH, n_resamples: int = clf_view.DEFAULT_RESAMPLES,
                   overwrite: bool = False,
                   progress: bool = True, extra_meta: dict | None = None, **load_options) -> dict:
    """Classifier view for one sequence-classification model on the given tasks."""
    started = time.perf_counter()
    loaded_tasks = _load_tasks(tasks, data_dir, n, seed)
    model = clf_view.load_classifier(spec, **load_options)
    config = {"view": "classifier", "max_length": max_length, "n": n, "seed": seed, "n_resamples": n_resamples,
              "input": clf_view.INPUT_COMPOSITION}
    out_dir, run_key = Path(out_dir), _run_key(model.fingerprint, loaded_tasks, config)
    previous = _previous(out_dir, run_key, overwrite)
    if previous is not None:
        return previous
    strategies = lou_spec().strategies
    rows = clf_view.classify_tasks(model, loaded_tasks, strategies, max_length, progress)
    summary = clf_view.summarise(rows, [t.name for t in loaded_tasks], strategies, seed, n_resamples)
    summary["meta"] = _meta("classifier", model.describe(), loaded_tasks, config, run_key, started, extra_meta)
    _write(out_dir, rows, clf_view.ITEM_COLUMNS, summary, report.classifier_markdown, plots.classifier_plot)
    return summary


def ranking_consistency(summaries: dict[str, dict]) -> dict:
    """Spearman agreement of several classifiers, per task.

    strategy_rankings: for each pair of models, ρ between their ΔF1 over the six
    strategies (do they find the same strategies hard?). model_rankings: for each
    strategy, ρ between the models' F1 on the original and on the reformulation (the
    paper's check that model rankings survive gender-fair language, Sec. 5 v). Each ρ
    comes with its p-value (`metrics.spearman`).
    """
    labels = list(summaries)
    shared = set.intersection(*(set(s["tasks"]) for s in summaries.values()))
    tasks = [t for t in next(iter(summaries.values()))["tasks"] if t in shared]
    strategies = lou_spec().strategies
    result = {}
    for task in tasks:
        entries = {label: summaries[label]["tasks"][task] for label in labels}
        pairs = [{"a": a, "b": b, **spearman([entries[a][s]["delta_f1"] for s in strategies],
                                             [entries[b][s]["delta_f1"] for s in strategies])}
                 for a, b in itertools.combinations(labels, 2)]
        original = [entries[label]["original"]["macro_f1"] for label in labels]
        models = {s: spearman(original, [entries[label][s]["macro_f1"] for label in labels]) for s in strategies}
        result[task] = {"strategy_rankings": pairs, "model_rankings": models}
    return {"models": labels, "tasks": result}


def _load_tasks(names, data_dir, n, seed) -> list[LouTask]:
    return [sample_task(load_task(name, data_dir), n, seed) for name in resolve_tasks(list(names or []), data_dir)]


def _run_key(fingerprint: str, tasks: Sequence[LouTask], config: dict) -> str:
    blob = json.dumps([fingerprint, [t.describe() | {"path": None} for t in tasks], config], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def _previous(out_dir: Path, run_key: str, overwrite: bool) -> dict | None:
    """The finished run already in out_dir when it is this one; refuse to replace another silently."""
    path = out_dir / "summary.json"
    if not path.is_file():
        return None
    summary = json.loads(path.read_text(encoding="utf-8"))
    if summary.get("meta", {}).get("run_key") == run_key and not overwrite:
        log.info("%s already holds this finished run; nothing to do", out_dir)
        return summary
    if not overwrite:
        raise QueerbiasError(f"{out_dir} already holds a finished run of another model, data or settings; "
                             "choose another --out or pass --overwrite")
    path.unlink()
    return None


def _meta(view: str, model: dict, tasks: Sequence[LouTask], config: dict, run_key: str, started: float,
          extra: dict | None, **more) -> dict:
    spec = lou_spec()
    checksum = hashlib.sha256("|".join(f"{t.name}:{t.checksum}" for t in tasks).encode()).hexdigest()
    return {
        "view": view, "model": model,
        "data": {"name": "lou", "checksum": checksum, "licence": spec.licence, "homepage": spec.homepage,
                 "citation": spec.citation, "tasks": [t.describe() for t in tasks]},
        "config": config, **more, "run_key": run_key, "versions": package_versions(),
        "timings": {"run_s": round(time.perf_counter() - started, 3)},
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        **(extra or {}),
    }


def _write(out_dir: Path, rows: list[dict], columns: Sequence[str], summary: dict, markdown, plot) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(out_dir / "items.csv", _csv(rows, columns))
    tmp_png = out_dir / ".summary.png.tmp.png"
    plot(summary, tmp_png).replace(out_dir / "summary.png")
    atomic_write(out_dir / "summary.md", markdown(summary))
    atomic_write(out_dir / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def _csv(rows: list[dict], columns: Sequence[str]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: ("" if v is None else repr(v) if isinstance(v, float) else v) for k, v in row.items()}
                     for row in rows)
    return buffer.getvalue()
