"""`queerbias study`: models × training runs × seeds in one command, with one report."""

from __future__ import annotations

import shlex

from queerbias.errors import QueerbiasError
from queerbias.outputs import path_arg


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "study", help="train every model × run × seed of a study file, then report over seeds",
        description="Run a study (docs/study.md): every model × training run × seed of FILE as an ordinary "
                    "training run in STUDY/runs/<model>/<run>/seed-<s>/ (resumable; finished cells are "
                    "skipped; a failed cell does not stop the others), base models scored once per model, "
                    "then STUDY/report/ (tables over seeds as Markdown, LaTeX and CSV, figures, index.html). "
                    "`study plan` prints the cells' commands and writes Slurm job arrays instead (a base task per "
                    "model, `study base STUDY M`, then a task per cell, `study cell STUDY INDEX`: the cell exactly "
                    "as the study runs it; `study prefetch STUDY` fetches what they read first); "
                    "`study report STUDY` writes the report again.")
    p.add_argument("--config", type=path_arg, help="the study file (see configs/study-*.yaml)")
    _common(p)
    p.add_argument("--jobs", type=int, default=1,
                   help="cells run side by side on this machine, sharing its cores (or GPUs) (default 1)")
    p.set_defaults(func=run)
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    plan = actions.add_parser("plan", help="prepare the cells, print their commands, write the Slurm scripts",
                              description="Prepare the study's cells (nothing is trained), print each cell's "
                                          "command (as `queerbias study` runs it) and write the Slurm scripts: "
                                          "a base array (one task per model), the cell array (one task per "
                                          "cell) and STUDY/slurm-submit.sh, which submits the cell array to "
                                          "start after the base array (docs/study.md).")
    plan.add_argument("--config", type=path_arg, required=True, help="the study file")
    _common(plan)
    plan.add_argument("--slurm-out", type=path_arg,
                      help="where the cell array's script goes (default STUDY/slurm-array.sh)")
    plan.set_defaults(func=run_plan)
    _task(actions, "cell", run_cell, "the cell's index in STUDY/plan.json (from 0)",
          help="run one cell of a prepared study (a Slurm array task)",
          description="Run cell INDEX of the prepared study STUDY exactly as `queerbias study` runs it: its "
                      "command, its log, its launch recorded with the commit and package versions. The Slurm "
                      "array of `study plan` runs this for each index.")
    _task(actions, "base", run_base, "the model's index in the study file (from 0)",
          help="score one model's base evaluations once (a Slurm base task)",
          description="Score the base model of the study's model INDEX (in the study file's order) on the "
                      "study's benchmarks into STUDY/base/<model>/, as the first cell of the model would, "
                      "without training. The base array of `study plan` runs this before the cell array, so "
                      "that no cell scores a base or waits on a lock for one.")
    prefetch = actions.add_parser("prefetch", help="download every model and data set the study's cells read",
                                  description="Fetch, where the network is, every model, benchmark data set, "
                                              "corpus and training pair set the cells of the prepared study "
                                              "STUDY read, into the caches they read from ($HF_HOME, "
                                              "$QUEERBIAS_CACHE), by the code the runs use. Run it before "
                                              "submitting the Slurm arrays, whose tasks read the caches "
                                              "offline.")
    prefetch.add_argument("study", type=path_arg, metavar="STUDY", help="the study folder (`study plan` made it)")
    prefetch.set_defaults(func=run_prefetch)
    report = actions.add_parser("report", help="write STUDY/report/ from the cells' files",
                                description="Aggregate what the cells of STUDY wrote (also cells run by a "
                                            "scheduler) into STUDY/report/.")
    report.add_argument("study", type=path_arg, metavar="STUDY", help="the study folder")
    report.set_defaults(func=run_report)


def _task(actions, name: str, func, index: str, **texts) -> None:
    """An action that runs task INDEX of a prepared study (a Slurm array's task)."""
    parser = actions.add_parser(name, **texts)
    parser.add_argument("study", type=path_arg, metavar="STUDY", help="the study folder")
    parser.add_argument("index", type=int, metavar="INDEX", help=index)
    parser.set_defaults(func=func)


def _common(parser) -> None:
    parser.add_argument("--out", type=path_arg, help="the study folder (default: the file's output_dir)")
    parser.add_argument("--force", action="store_true",
                        help="use a study folder made by another study file; cells whose training config "
                             "changed are deleted and run again")


def _studies():
    """The study runner (`study.run`: its cells and launches), which imports pandas and matplotlib: loaded when a
    study command runs, not when the CLI builds its parser."""
    from queerbias.study import run as studies  # pandas, matplotlib: when a study command runs

    return studies


def run(args) -> int:
    if args.config is None:
        raise QueerbiasError("--config is required (or give an action: plan, report)")
    report = _studies().run_study(args.config, jobs=args.jobs, force=args.force, out=args.out)
    return 0 if report.complete else 1


def run_plan(args) -> int:
    commands, submit = _studies().plan_study(args.config, force=args.force, out=args.out, slurm_out=args.slurm_out)
    for command in commands:
        print(shlex.join(command))
    study = shlex.quote(str(submit.parent))
    print(f"Slurm ({len(commands)} cells): first, where the network is: queerbias study prefetch {study}; then, "
          f"from this folder: bash {shlex.quote(str(submit))}")
    return 0


def run_cell(args) -> int:
    return _studies().run_planned_cell(args.study, args.index)


def run_base(args) -> int:
    from queerbias.study.run import base_config

    config = base_config(args.study, args.index)
    from queerbias.train.runner import score_shared_base

    scored = score_shared_base(config)
    print(f"{config.eval.base_from}: " + (f"scored {', '.join(scored)}" if scored else "published earlier, skipped"))
    return 0


def run_prefetch(args) -> int:
    from queerbias.study.run import planned_configs

    configs = planned_configs(args.study)
    from queerbias.train.prefetch import prefetch

    for line in prefetch(configs):
        print(line, flush=True)
    print(f"fetched what the {len(configs)} cells of {args.study} read")
    return 0


def run_report(args) -> int:
    from queerbias.study.report_folder import write_report  # pandas, matplotlib: when the command runs

    report = write_report(args.study)
    print(f"report: {report.index}" + ("" if report.complete else f" (INCOMPLETE: {len(report.missing)} missing)"))
    return 0
