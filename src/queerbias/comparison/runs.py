"""Finished runs for reports: labels, the compatibility check and item alignment of two runs.

A paired comparison is only valid on the same items evaluated the same way, so runs are
refused when they come from different suites, when their data checksum differs, or when
a setting that changes the items differs; items are matched by the suite's key columns
and their texts must agree, never by row order. Every refusal names the difference.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd

from queerbias.errors import QueerbiasError
from queerbias.options import item_fields
from queerbias.suites.paths import SUMMARY_FILE
from queerbias.suites.store import RunRecord, held_runs, load_run


def parse_run_arg(arg: str) -> tuple[str | None, Path]:
    """Split a `LABEL=DIR` argument; a plain DIR has no explicit label."""
    label, sep, path = arg.partition("=")
    if sep and label and "/" not in label and not Path(arg).is_dir():
        label, arg = label, path
    else:
        label = None
    if not arg.strip():  # Path('') would be the working folder
        raise QueerbiasError(f"run {label + '=' if label else ''}{arg!r}: an empty value names no run folder; "
                             "give the run's directory")
    return label, Path(arg).expanduser()


def load_runs(specs: list[tuple[str | None, Path]]) -> list[RunRecord]:
    """Load (label or None, directory) runs; labels must be unique. A default label (a training
    run's step, else the directory's name: `store.default_label`) that two training runs share
    takes the names of the folders above the checkpoint until it is unique (`runA/step-24`,
    `runB/step-24`); other folders that share a name are refused (name them as LABEL=DIR). A
    training checkpoint's folder stands for its run of the benchmark compared (`benchmark_folders`)."""
    paths = benchmark_folders([path for _, path in specs])
    return check_labels(unique_defaults([load_run(path, label) for (label, _), path in zip(specs, paths, strict=True)],
                                        [label is None for label, _ in specs]), "name them as LABEL=DIR")


def benchmark_folders(paths: list[Path]) -> list[Path]:
    """The run folders to compare: each path as given, except a folder of runs (a training run's
    `checkpoint-N/` or `base/`, which hold one run per benchmark), which stands for its run of the
    benchmark compared, so that `compare RUN/base/bias RUN/checkpoint-*` compares every checkpoint's
    `bias`. That benchmark is the one name the given run folders share, else the one benchmark every
    folder of runs holds; where neither settles it, the refusal names the benchmarks each holds."""
    held = {path: held_runs(path) for path in paths if path.is_dir() and not (path / SUMMARY_FILE).exists()}
    held = {path: names for path, names in held.items() if names}
    if not held:
        return list(paths)
    named = {path.name for path in paths if path not in held}
    common = set.intersection(*(set(names) for names in held.values()))
    chosen = named if len(named) == 1 else common if not named and len(common) == 1 else set()
    for path, names in held.items():
        if not chosen or not chosen <= set(names):
            wanted = (f"the runs given beside it are of {', '.join(sorted(named))}" if named
                      else "which one to compare is not settled")
            raise QueerbiasError(f"{path}: a folder of runs, one per benchmark ({', '.join(names)}), and {wanted}; "
                                 f"give the benchmark's folder, e.g. {path / names[0]}")
    (name,) = chosen
    return [path / name if path in held else path for path in paths]


def benchmark_name(runs: list[RunRecord]) -> str | None:
    """The benchmark the runs evaluated, where they are one training run's evaluations of it (RUN/base/bias,
    RUN/checkpoint-8/bias: "bias", the folder name every evaluation of a benchmark has), so that reports
    name it; None for other runs (score folders, models compared by name), which their data names."""
    names = {run.path.name for run in runs if run.path is not None}
    trained = all(run.path is not None and run.step is not None and "run" in run.meta for run in runs)
    return names.pop() if trained and len(names) == 1 else None


def unique_defaults(runs: list[RunRecord], defaulted: list[bool]) -> list[RunRecord]:
    """Training runs' evaluations whose default step labels collide, relabelled with the folders
    above their checkpoint folder (RUN/checkpoint-N/B: RUN); given labels and folder names stay."""
    runs = list(runs)
    stepped = [defaulted[i] and run.label in ("base", f"step-{run.step}") for i, run in enumerate(runs)]
    for depth in range(2, 5):
        labels = [run.label for run in runs]
        clashing = [i for i, run in enumerate(runs) if stepped[i] and labels.count(run.label) > 1]
        for i in clashing:
            folders = runs[i].path.resolve().parents[:-1]  # every folder above the run but `/`, which has no name
            if depth - 1 < len(folders):  # near `/` the labels stay as they are: `check_labels` names them
                runs[i] = replace(runs[i], label=f"{folders[depth - 1].name}/{runs[i].label.rsplit('/', 1)[-1]}")
    return runs


def check_labels(runs: list[RunRecord], remedy: str) -> list[RunRecord]:
    """The runs, refused when two share a label (tables and plots would confuse them)."""
    labels = [run.label for run in runs]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise QueerbiasError(f"several runs are labelled {', '.join(duplicates)}; {remedy}")
    return runs


def check_compatible(before: RunRecord, after: RunRecord) -> None:
    """Refuse runs of different suites, data or item-changing settings, naming the difference."""
    if before.suite.name != after.suite.name:
        raise QueerbiasError(f"cannot compare {before.label} with {after.label}: {before.label} is a "
                             f"{before.suite.name} run, {after.label} a {after.suite.name} run")
    checks = (("data checksum", ("data", "checksum")), *before.suite.compatible)
    for what, keys in checks:
        values = [_nested(run.meta, keys) for run in (before, after)]
        for run, value in zip((before, after), values, strict=True):
            if value is None:
                raise QueerbiasError(f"{run.path}: summary.json meta has no {what}")
        _refuse_difference(before, after, what, *values)
    settings = [run.meta.get("settings") for run in (before, after)]
    if all(isinstance(s, dict) for s in settings):
        for name in item_fields(before.suite.Settings):
            _refuse_difference(before, after, f"setting {name}", settings[0].get(name), settings[1].get(name))


def _refuse_difference(before: RunRecord, after: RunRecord, what: str, first, second) -> None:
    if first != second:
        raise QueerbiasError(f"cannot compare {before.label} with {after.label}: {what} differs "
                             f"({before.label}: {first}, {after.label}: {second})")


def align_rows(before: pd.DataFrame, after: pd.DataFrame, keys: tuple[str, ...], texts: tuple[str, ...],
               labels: tuple[str, str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The two runs' rows in BEFORE's order, matched on the key columns; the same items with the
    same texts are required (an item missing from one run is an error, never dropped)."""
    ids = [before[list(keys)].astype(str).agg("/".join, axis=1), after[list(keys)].astype(str).agg("/".join, axis=1)]
    only = [sorted(set(ids[0]) - set(ids[1])), sorted(set(ids[1]) - set(ids[0]))]
    if only[0] or only[1]:
        raise QueerbiasError(
            f"{labels[0]} and {labels[1]} evaluated different items: {len(only[0])} only in {labels[0]} "
            f"{only[0][:3]}, {len(only[1])} only in {labels[1]} {only[1][:3]}")
    position = pd.Series(range(len(after)), index=ids[1].to_numpy())
    after = after.iloc[position.loc[ids[0].to_numpy()].to_numpy()].reset_index(drop=True)
    before = before.reset_index(drop=True)
    for column in texts:
        differs = before[column].astype(str) != after[column].astype(str)
        if differs.any():
            first = differs.to_numpy().argmax()
            raise QueerbiasError(
                f"{labels[0]} and {labels[1]} differ in {column} for {int(differs.sum())} item(s), e.g. "
                f"{'/'.join(keys)} {ids[0].iloc[first]}: {before[column].iloc[first]!r} vs "
                f"{after[column].iloc[first]!r}")
    return before, after


def _nested(mapping: dict, keys: tuple[str, ...]):
    for key in keys:
        if not isinstance(mapping, dict):
            return None
        mapping = mapping.get(key)
    return mapping
