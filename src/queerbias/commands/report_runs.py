"""`queerbias report`: tables and a figure of several runs side by side, as their suite reports them
(the suite's report companion, `suites.companions.ReportHooks`; pair runs: the paper's bias and soft
tables ± SE and bars)."""

from __future__ import annotations

import argparse

from queerbias.errors import QueerbiasError
from queerbias.fileio import atomic_write
from queerbias.outputs import path_arg
from queerbias.suites.paths import checked_out
from queerbias.suites.registry import companion


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "report",
        help="tables of the scores of several runs of one suite",
        description="Render scores.md/.csv/.tex and scores.png from run directories of one suite: pair runs "
                    "get the paper's bias and soft tables, other suites their headline figure per group.",
    )
    p.add_argument("runs", nargs="+", metavar="RUN_DIR",
                   help="run directory; LABEL=DIR sets its column name (default: directory name)")
    p.add_argument("--out", required=True, type=path_arg, help="directory for the tables and the plot")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from queerbias.comparison.runs import load_runs, parse_run_arg  # pandas: when the command runs
    from queerbias.report.score_tables import headline_plot, render_headline_tables  # matplotlib: as pandas

    specs = [parse_run_arg(arg) for arg in args.runs]
    args.out = checked_out(args.out, [path for _, path in specs])
    runs = load_runs(specs)
    suites = sorted({r.suite.name for r in runs})
    if len(suites) > 1:
        raise QueerbiasError(f"runs of several suites ({', '.join(suites)}); report one suite at a time")
    args.out.mkdir(parents=True, exist_ok=True)
    hooks, headlines = companion(runs[0].suite, "report"), [(r.label, r.headline) for r in runs]
    tables = hooks.tables(runs) or render_headline_tables(headlines)
    for kind, text in tables.items():
        atomic_write(args.out / f"scores.{kind}", text)
    hooks.plot(runs, args.out / "scores.png") or headline_plot(headlines, args.out / "scores.png")
    print(tables["md"], end="")
    print(f"\nwrote {args.out}/scores.{{md,csv,tex}} and scores.png")
    return 0
