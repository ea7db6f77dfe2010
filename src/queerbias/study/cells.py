"""Cells: one ordinary training run per model × run × seed, in STUDY/runs/<model>/<run>/seed-<s>/.

`prepare` checks the whole study before any cell runs: a STUDY folder made by another
study file is refused (unless `force`), every cell's training config is built and
checked by the training loader (`train.config.load_config`), and a cell whose training
config changed since it started is refused (with `force` it is deleted and run again).
Then it writes STUDY/study.yaml (the study file, normalised), each cell's training
config (`study-cell.yaml`, the file its command trains from) and STUDY/plan.json (the
cells, their benchmarks and commands), which the report reads. `force` deletes only what
the study and its runs wrote, and only once it holds the locks of everything it deletes
(a cell's and its training run's, each shared base's): a cell or base another process is
using is refused, before anything is deleted, never waited for.

A cell's folder is a training run folder (config.yaml, metrics.jsonl, base/, checkpoints,
compare/, final/, queerbias-finished last) plus the study's files: its training config, its
log (`study-cell.log`, every launch appended), one line per launch in
`study-cell-launches.jsonl` (start, seconds, exit status, commit, versions) and, once a
launch ended with status 0 beside a finished run, the mark `study-cell-finished`. Base models
are scored once per model: every cell of a model sets `eval.base_from` to STUDY/base/<model>
(`train.shared_base`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import yaml

from queerbias.errors import DataError, QueerbiasError
from queerbias.fileio import atomic_write, cut_partial_line, iter_jsonl
from queerbias.options import without_new_defaults
from queerbias.outputs import LOCK_FILE as RUN_LOCK
from queerbias.outputs import lock_file
from queerbias.study.config import REPORT_KEYS, StudyConfig, load_study
from queerbias.suites.paths import PARTIAL_DIR, SUMMARY_FILE, folder_name_problem
from queerbias.suites.store import read_json_file
from queerbias.train.checkpoints import owned_entry
from queerbias.train.config import check_installed, default_values, load_config, migrate
from queerbias.train.shared_base import LOCK_FILE as SHARED_LOCK
from queerbias.yamlio import load_yaml_mapping

log = logging.getLogger(__name__)

STUDY_FILE = "study.yaml"
PLAN_FILE = "plan.json"
BASE_DIR = "base"
#: what the shared base evaluations depend on: --force deletes them when one of these changed;
#: more runs, seeds or exclusions keep them (each is adopted only when its run key matches)
BASE_KEYS = ("models", "benchmarks", "training", "accelerate_config")
RUNS_DIR = "runs"
CELL_CONFIG = "study-cell.yaml"
CELL_LOG = "study-cell.log"
LOCK_FILE = ".study-cell.lock"  # held by the process running the cell (study/execution.py)
LAUNCHES = "study-cell-launches.jsonl"
#: written by the study when a launch ended with status 0 and its training run finished: the one sign of a
#: finished cell (a model card can be written by `queerbias card` into a run that never finished)
FINISHED_MARK = "study-cell-finished"

#: the accelerate entry script of a source checkout (train/finetune.py: one-line refusals)
FINETUNE = Path(__file__).resolve().parents[3] / "train" / "finetune.py"


@dataclass(frozen=True)
class Cell:
    """One training run of the study, named by its model, run and seed; `benchmarks` are its
    benchmarks' output names (known once its training config is built)."""

    model: str
    run: str
    seed: int
    folder: Path
    benchmarks: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.model}/{self.run}/seed-{self.seed}"

    @property
    def config_file(self) -> Path:
        return self.folder / CELL_CONFIG

    @property
    def log_file(self) -> Path:
        return self.folder / CELL_LOG

    @property
    def launches_file(self) -> Path:
        return self.folder / LAUNCHES

    def finished(self) -> bool:
        return (self.folder / FINISHED_MARK).is_file()

    def mark_finished(self) -> None:
        """Record that a launch ended with status 0 beside a finished training run (`checkpoints.is_finished`)."""
        atomic_write(self.folder / FINISHED_MARK, "finished\n")

    def launches(self) -> list[dict]:
        """Every launch recorded for this cell (by the study or a Slurm array task), oldest first.

        A launch is recorded when it starts (a line with its `launch` id) and again when it ends
        (`seconds`, `returncode`). One whose end its launcher never wrote was killed with it (or
        is still running): it reads `interrupted: True`, `returncode: None` and, for `seconds`,
        the time up to the last write to the cell's log (`record_interrupted` fixes that time
        when the next launch starts). A line that is no launch record (cut short by a kill,
        written by another tool, a launch without its start time) is refused, naming the file
        and line.
        """
        if not self.launches_file.is_file():
            return []
        merged: dict[str, dict] = {}
        first_line: dict[str, int] = {}
        try:
            for number, record in iter_jsonl(self.launches_file):
                _check_launch_line(record, self.launches_file, number)
                key = str(record.get("launch", f"line {number}"))  # an older study's line is a whole launch
                merged[key] = {**merged.get(key, {}), **record}
                first_line.setdefault(key, number)
            for key, launch in merged.items():
                if "started" not in launch:
                    raise DataError(self.launches_file, f"launch {key!r} has no start time ('started'): its start "
                                                        "line is missing", row=first_line[key], field="started")
        except DataError as err:
            raise DataError(err.path, f"{err.message}; not a launch record: delete that line (the "
                                      "cell's launches are a record of its runs, not needed to resume it)",
                            row=err.row, field=err.field) from None
        launches = list(merged.values())
        for launch in launches:
            if "seconds" not in launch:  # no end line: `open`
                launch.update(interrupted=True, open=True, returncode=None,
                              seconds=self.seconds_since(launch["started"]))
            launch.setdefault("interrupted", False)
        return launches

    def record_launch(self, record: dict) -> None:
        """Append one line to the launches file (a launch's start or its end), after cutting a
        line a kill left unfinished."""
        cut_partial_line(self.launches_file)
        with open(self.launches_file, "a", encoding="utf-8") as launches:
            launches.write(json.dumps(record) + "\n")

    def record_interrupted(self) -> None:
        """Before a new launch: end the launch a kill left open, at its last write to the log."""
        for launch in self.launches():
            if launch.get("open"):
                self.record_launch({"launch": launch["launch"], "seconds": launch["seconds"], "returncode": None,
                                    "interrupted": True})

    def started(self) -> bool:
        """Whether training ever began here: a launch, the run's config.yaml or a checkpoint."""
        return (self.launches_file.is_file() or (self.folder / "config.yaml").is_file()
                or any(self.folder.glob("checkpoint-*")))

    def seconds_since(self, started: str) -> float | None:
        """Seconds from `started` (ISO time) to the last write to the cell's log."""
        if not self.log_file.is_file():
            return None
        begin = datetime.fromisoformat(started).timestamp()
        return round(max(0.0, self.log_file.stat().st_mtime - begin), 1)


#: what each key of a launches line holds, as `execution.run_cell` writes it (other keys: provenance, as written)
_LAUNCH_KEYS = {"launch": (str,), "started": (str,), "launcher": (str,), "seconds": (int, float, type(None)),
                "returncode": (int, type(None)), "interrupted": (bool,)}


def _check_launch_line(record: dict, path: Path, row: int) -> None:
    """One line of a launches file as a launch writes it: its keys' types (JSON has no NaN: the
    strict reader refused it), a time that is not negative and a start time that reads."""
    for key, types in _LAUNCH_KEYS.items():
        value = record.get(key)
        if key in record and (not isinstance(value, types) or isinstance(value, bool) and bool not in types):
            raise DataError(path, f"{key} is {json.dumps(value)[:40]}, not what a launch writes there", row=row,
                            field=key)
    if (record.get("seconds") or 0) < 0:
        raise DataError(path, f"seconds is {record['seconds']}, not a time a launch took", row=row, field="seconds")
    if "started" in record:
        try:
            datetime.fromisoformat(record["started"])
        except ValueError:
            raise DataError(path, f"the start time {record['started'][:40]!r} is no ISO date and time", row=row,
                            field="started") from None


def launch_command(cell: Cell, accelerate_config: str | None = None) -> list[str]:
    """The one command that runs a cell, on this machine (`queerbias study`) and on a cluster (the
    Slurm array of `study plan`, through `queerbias study cell`) alike: `queerbias train --config
    CELL` in one process, or with an accelerate config `accelerate launch --config_file F
    train/finetune.py --config CELL` (the entry script of a checkout; an installed package
    launches the CLI module). Absolute paths of the interpreter running the study, so that every
    cell runs the same installation wherever it runs."""
    config = ["--config", str(cell.config_file.absolute())]
    if not accelerate_config:
        return [sys.executable, "-m", "queerbias.cli", "train", *config]
    accelerate = Path(sys.executable).with_name("accelerate")
    target = [str(FINETUNE)] if FINETUNE.is_file() else ["-m", "queerbias.cli", "train"]
    return [str(accelerate) if accelerate.is_file() else "accelerate", "launch", "--config_file",
            str(Path(accelerate_config).absolute()), "--main_process_port", "0", *target, *config]


def cell_folder(root: Path, model: str, run: str, seed: int) -> Path:
    return root / RUNS_DIR / model / run / f"seed-{seed}"


def planned(study: StudyConfig) -> list[Cell]:
    """The study's cells in order: models, then seeds, then runs, as the file lists them, so that a
    study cut short has every run at its first seeds rather than some runs at every seed."""
    root = Path(study.output_dir)
    return [Cell(model, run, seed, cell_folder(root, model, run, seed))
            for model in study.models for seed in study.seeds for run in study.runs
            if not study.excluded(model, run, seed)]


def prepare(study: StudyConfig, force: bool = False) -> list[Cell]:
    """Check the study whole, then write study.yaml, the cells' training configs and plan.json."""
    root = Path(study.output_dir)
    changed = _check_folder(study, root, force)
    configs = {cell: _training_config(study, cell) for cell in planned(study)}
    stale = [cell for cell, config in configs.items() if _changed_cell(cell, config, force)]
    bases = sorted((root / BASE_DIR).iterdir()) if set(changed) & set(BASE_KEYS) and (root / BASE_DIR).is_dir() \
        else []  # base evaluations of the old study
    with contextlib.ExitStack() as held:
        for cell in stale:
            for name in (LOCK_FILE, RUN_LOCK):
                held.enter_context(_lock(cell.folder / name, f"study cell {cell.name} changed, but another process "
                                                            "is running it; nothing was deleted (wait for it, then run "
                                                            "the study again)"))
        for base in bases:
            held.enter_context(_lock(base / SHARED_LOCK, f"{base} holds base evaluations of the old study, but "
                                                         "another process is scoring there; nothing was deleted (wait "
                                                         "for it, then run the study again)"))
        for cell in stale:
            _delete_run(cell.folder)
        for base in bases:
            _delete_base(base)
        if bases:
            with contextlib.suppress(OSError):  # empty now, unless something not ours stayed
                (root / BASE_DIR).rmdir()
    root.mkdir(parents=True, exist_ok=True)
    atomic_write(root / STUDY_FILE, yaml.safe_dump(study.record(), sort_keys=False, allow_unicode=True))
    cells = []
    for cell, config in configs.items():
        cell.folder.mkdir(parents=True, exist_ok=True)
        atomic_write(cell.config_file, _dump(config))
        cells.append(Cell(cell.model, cell.run, cell.seed, cell.folder, tuple(config["benchmark_dirs"])))
    write_plan(root, cells, study.accelerate_config)
    return cells


def _check_folder(study: StudyConfig, root: Path, force: bool) -> list[str]:
    """The keys in which STUDY's own study differs from `study` (another study is refused unless
    `force`); empty for the same study or a new folder."""
    if not (root / STUDY_FILE).is_file():
        if root.exists() and any(root.iterdir()) and not force:
            raise QueerbiasError(f"{root} is not empty and holds no {STUDY_FILE}; choose another output_dir "
                                 "(or pass --force to use it)")
        return []
    previous = load_study(root / STUDY_FILE, output_dir=study.output_dir)
    if previous.same_study(study):
        return []
    old, new = previous.record(), study.record()
    differs = [key for key in new if key not in ("output_dir", *REPORT_KEYS) and old.get(key) != new[key]]
    if not force:
        raise QueerbiasError(f"{root} holds a study made by another config (differs in {', '.join(differs)}); "
                             "choose another output_dir, or pass --force to run this one there (cells whose "
                             "training config changed are deleted and run again)")
    log.warning("%s: study config changed (%s); --force given", root, ", ".join(differs))
    return differs


def _training_config(study: StudyConfig, cell: Cell) -> dict:
    """The cell's training config, built and checked by the training loader, as a mapping."""
    run, model = study.runs[cell.run], study.models[cell.model]
    path = run.config or study.training.config
    overrides = [*study.training.override_args(), *run.override_args(), *model.override_args(),
                 f"model={json.dumps(model.config)}", f"seed={cell.seed}",
                 f"output_dir={json.dumps(str(cell.folder))}",
                 f"eval.benchmarks={json.dumps(study.benchmarks, ensure_ascii=False)}",
                 f"eval.base_from={json.dumps(str(Path(study.output_dir) / BASE_DIR / cell.model))}"]
    try:
        config = load_config(path, overrides)
        check_installed(config)
    except QueerbiasError as err:
        raise QueerbiasError(f"study cell {cell.name}: {err}") from None
    return {**config.to_dict(), "benchmark_dirs": config.benchmark_dirs()}


def _dump(config: dict) -> str:
    body = {key: value for key, value in config.items() if key != "benchmark_dirs"}
    return yaml.safe_dump(body, sort_keys=False, allow_unicode=True)


def _changed_cell(cell: Cell, config: dict, force: bool) -> bool:
    """Whether a started cell's training config changed: refused, or (with `force`) to delete."""
    if not cell.config_file.is_file() or not (cell.folder / "config.yaml").is_file():
        return False
    previous = migrate(load_yaml_mapping(cell.config_file, what="study cell config"), warn=False)
    body = without_new_defaults(previous, yaml.safe_load(_dump(config)), default_values())
    if previous == body:
        return False
    differs = sorted(key for key in set(previous) | set(body) if previous.get(key) != body.get(key))
    if not force:
        raise QueerbiasError(f"study cell {cell.name} was started with another training config (differs in "
                             f"{', '.join(differs)}); pass --force to delete it and run it again")
    log.warning("study cell %s: training config changed (%s); deleted to run again", cell.name, ", ".join(differs))
    return True


@contextlib.contextmanager
def _lock(path: Path, busy: str):
    """The lock `path` held without waiting (`busy`: the refusal when another process holds it)."""
    if not path.parent.is_dir():
        yield
        return
    fd = lock_file(path, 0o644, busy)
    try:
        yield
    finally:
        os.close(fd)


def _delete_run(folder: Path) -> None:
    """What a training run and the study wrote into a cell folder (`checkpoints.owned_entry`); anything
    else stays (the training run then refuses the folder, naming it)."""
    for entry in list(folder.iterdir()):
        if owned_entry(entry.name):
            _remove(entry)


def _delete_base(folder: Path) -> None:
    """A model's shared base evaluations: each a run folder (or one being copied in), and the lock."""
    for entry in list(folder.iterdir()):
        if entry.name == SHARED_LOCK or entry.name.startswith(".incoming-") or (
                entry.is_dir() and ((entry / SUMMARY_FILE).exists() or (entry / PARTIAL_DIR).exists())):
            _remove(entry)
    with contextlib.suppress(OSError):
        folder.rmdir()


def _remove(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry)
    else:
        entry.unlink()


def write_plan(root: Path, cells: list[Cell], accelerate_config: str | None) -> None:
    plan = [{"model": c.model, "run": c.run, "seed": c.seed, "folder": str(c.folder.relative_to(root)),
             "benchmarks": list(c.benchmarks), "command": launch_command(c, accelerate_config)} for c in cells]
    atomic_write(root / PLAN_FILE, json.dumps({"cells": plan}, indent=2, ensure_ascii=False) + "\n")


def read_plan(root: Path) -> list[Cell]:
    """The cells of a prepared STUDY folder (what `prepare` wrote), read strictly: the cells of the
    folder's study.yaml, in its order, each in its own folder of the study's layout (a plan that
    points a cell at another run folder would report that run as the study's)."""
    path = root / PLAN_FILE
    if not path.is_file():
        raise QueerbiasError(f"{root}: not a study folder (no {PLAN_FILE}); run `queerbias study --config FILE` "
                             "or `queerbias study plan --config FILE` first")
    document = read_json_file(path, "study plan")
    entries = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
        raise QueerbiasError(f"{path}: not a study plan (no list of cells); run the study's command again to "
                             "rewrite it")
    expected = planned(load_study(root / STUDY_FILE, output_dir=str(root)))
    if len(entries) != len(expected):
        raise QueerbiasError(f"{path}: {len(entries)} cells, but {root / STUDY_FILE} makes {len(expected)}; not this "
                             "study's plan: run the study's command again to rewrite it")
    cells = []
    for index, (entry, cell) in enumerate(zip(entries, expected, strict=True)):
        layout = str(cell.folder.relative_to(root))
        named = (entry.get("model"), entry.get("run"), entry.get("seed"), entry.get("folder"))
        benchmarks = entry.get("benchmarks")
        if named != (cell.model, cell.run, cell.seed, layout) or isinstance(entry.get("seed"), bool) \
                or not isinstance(benchmarks, list) or any(folder_name_problem(name) for name in benchmarks):
            raise QueerbiasError(f"{path}: cell {index} is not cell {cell.name} of the study in {layout} with "
                                 "benchmark folder names; not this study's plan: run the study's command again to "
                                 "rewrite it")
        cells.append(Cell(cell.model, cell.run, cell.seed, cell.folder, tuple(benchmarks)))
    return cells
