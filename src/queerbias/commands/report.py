"""`queerbias report`: tables of several runs side by side (pair runs: bias and soft ± SE, plus bars)."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "report",
        help="tables of the scores of several runs of one suite",
        description="Render scores.md/.csv/.tex (and for pair runs scores.png) from run directories of one "
                    "suite: pair runs get the paper's bias and soft tables, other suites their headline figure "
                    "per group.",
    )
    p.add_argument("runs", nargs="+", metavar="RUN_DIR",
                   help="run directory; LABEL=DIR sets its column name (default: directory name)")
    p.add_argument("--out", required=True, type=Path, help="directory for the tables and the plot")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from queerbias.commands.run import checked_out
    from queerbias.errors import QueerbiasError
    from queerbias.fileio import atomic_write
    from queerbias.report.runs import load_runs, parse_run_arg
    from queerbias.report.score_tables import render_headline_tables, render_score_tables, score_matrix

    specs = [parse_run_arg(arg) for arg in args.runs]
    checked_out(args.out, [path for _, path in specs])
    runs = load_runs(specs)
    suites = sorted({r.suite.name for r in runs})
    if len(suites) > 1:
        raise QueerbiasError(f"runs of several suites ({', '.join(suites)}); report one suite at a time")
    args.out.mkdir(parents=True, exist_ok=True)
    if suites == ["pairs"]:
        summaries = [(r.label, r.summary) for r in runs]
        tables = render_score_tables(summaries)
        from queerbias.report.plots import scores_plot  # heavy imports only when the command runs

        scores_plot(*score_matrix(summaries), args.out / "scores.png")
    else:
        tables = render_headline_tables([(r.label, r.headline) for r in runs])
    for kind, text in tables.items():
        atomic_write(args.out / f"scores.{kind}", text)
    print(tables["md"], end="")
    print(f"\nwrote {args.out}/scores.{{md,csv,tex}}" + (" and scores.png" if suites == ["pairs"] else ""))
    return 0
