"""A study in one call: check it whole, prepare its cells, run what is unfinished, report.

`run_study` is `queerbias study --config FILE` and `qb.study(FILE)`; `plan_study` is
`queerbias study plan` (the cells prepared, each cell's command and the Slurm scripts, nothing
run); `run_planned_cell` is `queerbias study cell` (one cell of a prepared study, as the Slurm
array's tasks run them); `base_config` and `planned_configs` give `queerbias study base` and
`study prefetch` the training configs they work from.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING

from queerbias.errors import QueerbiasError
from queerbias.fileio import atomic_write
from queerbias.outputs import STUDY, output_path
from queerbias.study.cells import STUDY_FILE, launch_command, prepare, read_plan
from queerbias.study.config import StudyConfig, load_study
from queerbias.study.execution import (
    Launched,
    describe,
    launch_provenance,
    run_cell,
    run_cells,
    slot_environments,
)
from queerbias.study.plan import BASE_SCRIPT, SUBMIT_SCRIPT, base_script, slurm_script, submit_script
from queerbias.train.config import load_config

if TYPE_CHECKING:
    from queerbias.study.report_folder import StudyReport

SLURM_FILE = "slurm-array.sh"


def run_study(config: str | Path, *, jobs: int = 1, force: bool = False, out: str | Path | None = None,
              say=print) -> StudyReport:
    """Run (or resume) the study of `config` and write STUDY/report/."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise QueerbiasError(f"--jobs must be a positive integer, got {jobs!r}")
    study, _ = checked_study(config, out)
    cells = prepare(study, force=force)
    say(f"study {study.output_dir}: {len(cells)} cells, {sum(not c.finished() for c in cells)} to run, "
        f"{jobs} at a time")
    run_cells(cells, jobs=jobs, accelerate_config=study.accelerate_config, say=say)
    from queerbias.study.report_folder import write_report  # models, figures: once a report is due

    report = write_report(study.output_dir)
    if report.complete:
        say(f"study complete; report: {report.index}")
    else:
        say(f"study INCOMPLETE ({len(report.missing)} missing; see the report's first lines): {report.index}")
    return report


def checked_study(config: str | Path, out: str | Path | None) -> tuple[StudyConfig, list]:
    """The study, its folder (`out`, else the file's output_dir; `~` expanded) checked before anything
    is written (`outputs.output_path`): not holding the study file, a run's config, a model or
    data it names, and no folder another tool owns; and the study's inputs (the study file and
    every value of the study that is a path here)."""
    if out is not None and not os.fspath(out).strip():
        raise QueerbiasError("--out is empty; give the study folder, or leave --out out to use the study file's "
                             "output_dir")
    study = load_study(config, output_dir=None if out is None else os.fspath(out))
    record = {key: value for key, value in study.record().items() if key != "output_dir"}
    inputs = [config, record]
    folder = output_path(study.output_dir, inputs, kind=STUDY,
                         option="--out" if out is not None else f"study key 'output_dir' of {config}")
    return dataclasses.replace(study, output_dir=str(folder)), inputs


def plan_study(config: str | Path, *, force: bool = False, out: str | Path | None = None,
               slurm_out: str | Path | None = None) -> tuple[list[list[str]], Path]:
    """Prepare the cells and write the Slurm scripts (`study.plan`: the cell array, the base array and
    the script that submits both); returns each cell's command (as `queerbias study` runs it) and the
    submit script's path."""
    study, inputs = checked_study(config, out)
    root = Path(study.output_dir)
    path = output_path(slurm_out, inputs, option="--slurm-out", file=True) if slurm_out is not None \
        else root / SLURM_FILE
    cells = prepare(study, force=force)
    commands = [launch_command(cell, study.accelerate_config) for cell in cells]
    base, submit = root / BASE_SCRIPT, root / SUBMIT_SCRIPT
    for target, text in ((path, slurm_script(cells, root, root.name)), (base, base_script(list(study.models), root,
                                                                                          root.name)),
                         (submit, submit_script(path.absolute(), base.absolute()))):
        atomic_write(target, text)
        target.chmod(0o755)
    return commands, submit


def base_config(root: str | Path, index: int):
    """The training config whose base model task `index` of the base array scores: the first cell of the
    study's model `index` (every cell of a model shares its base, `eval.base_from`)."""
    root = Path(root)
    study = load_study(root / STUDY_FILE, output_dir=str(root))
    models = list(study.models)
    if not 0 <= index < len(models):
        raise QueerbiasError(f"no model {index} in the study {root} (its models are 0-{len(models) - 1})")
    cell = next(cell for cell in read_plan(root) if cell.model == models[index])
    return load_config(cell.config_file)


def planned_configs(root: str | Path) -> list:
    """Every cell's training config of a prepared study (what `study prefetch` fetches for)."""
    return [load_config(cell.config_file) for cell in read_plan(Path(root))]


def run_planned_cell(root: str | Path, index: int, say=print) -> int:
    """Cell `index` of a prepared study, run as `queerbias study` runs it (a Slurm array task);
    returns 0 when it is finished, 1 when it failed."""
    root = Path(root)
    cells = read_plan(root)
    if not 0 <= index < len(cells):
        raise QueerbiasError(f"no cell {index} in the study {root} (its cells are 0-{len(cells) - 1})")
    cell = cells[index]
    if cell.finished():
        say(f"{cell.name}: finished earlier, skipped")
        return 0
    study = load_study(root / STUDY_FILE, output_dir=str(root))
    job = os.environ.get("SLURM_ARRAY_JOB_ID")
    launcher = f"slurm {job}_{os.environ.get('SLURM_ARRAY_TASK_ID', index)}" if job else "queerbias study cell"
    with Launched() as launched:  # a job's end (SIGTERM) ends the training too and records it interrupted
        outcome = run_cell(cell, launch_command(cell, study.accelerate_config), slot_environments(1)[0],
                           launch_provenance(), launcher, launched=launched)
    say(describe(outcome))
    return 0 if outcome.status == "finished" else 1
