"""`queerbias report`: score tables (bias and soft, ± SE) of several runs, plus a bar plot."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "report",
        help="tables of bias and soft scores of several score runs",
        description="Render scores.md/.csv/.tex and scores.png from `queerbias score` output directories.",
    )
    p.add_argument("runs", nargs="+", metavar="RUN_DIR",
                   help="score output directory; LABEL=DIR sets its column name (default: directory name)")
    p.add_argument("--out", required=True, type=Path, help="directory for the tables and the plot")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from queerbias.report.plots import (
        scores_plot,  # heavy imports only when the command runs
    )
    from queerbias.report.runs import load_runs, parse_run_arg
    from queerbias.report.score_tables import render_score_tables, score_matrix

    runs = load_runs([parse_run_arg(arg) for arg in args.runs])
    summaries = [(r.label, r.summary) for r in runs]
    args.out.mkdir(parents=True, exist_ok=True)
    tables = render_score_tables(summaries)
    for kind, text in tables.items():
        (args.out / f"scores.{kind}").write_text(text, encoding="utf-8")
    scores_plot(*score_matrix(summaries), args.out / "scores.png")
    print(tables["md"], end="")
    print(f"\nwrote {args.out}/scores.{{md,csv,tex,png}}")
    return 0
