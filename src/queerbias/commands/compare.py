"""`queerbias compare`: did a mitigation change a model's bias, per identity group?

numpy, scipy and matplotlib are imported when the command runs, not when the CLI
builds its parser.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from queerbias.commands.score import add_model_options, add_scoring_options
from queerbias.errors import QueerbiasError
from queerbias.report.choices import BEST_CRITERIA, CORRECTIONS, SOFT_TESTS


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "compare",
        help="paired tests of bias change between score runs (before vs. after mitigation)",
        description=(
            "Compare BEFORE with each AFTER on the same pairs: exact McNemar test on the biased flags, "
            "Wilcoxon signed-rank (or paired t) test on the soft scores, paired bootstrap intervals, "
            "p-values corrected across identity groups. See docs/compare.md."
        ),
    )
    p.add_argument("runs", nargs="*", metavar="RUN_DIR",
                   help="BEFORE then AFTER score directories; LABEL=DIR names a column (default: directory name)")
    p.add_argument("--model", action="append", default=[], metavar="SPEC",
                   help="score this model first (repeat; the first is BEFORE); needs --pairs")
    p.add_argument("--pairs", help="pairs to score the --model specs on")
    add_model_options(p)
    add_scoring_options(p)
    p.add_argument("--out", required=True, type=Path, help="directory for delta.json/.csv/.md/.tex and plots")
    p.add_argument("--soft-test", choices=SOFT_TESTS, default="wilcoxon",
                   help="paired test on the soft scores (default: wilcoxon)")
    p.add_argument("--correction", choices=CORRECTIONS, default="holm",
                   help="p-value correction across groups: holm (family-wise) or bh (false discovery rate)")
    p.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples (default: 10000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    p.add_argument("--best", choices=BEST_CRITERIA, default="closest50",
                   help="best-checkpoint criterion: lowest overall bias, closest to 50 (default), or lowest "
                        "distance to indifference (mean over groups of |bias - 50|)")
    p.add_argument("--ppl-margin", type=float, default=5.0, metavar="PCT",
                   help="exclude checkpoints whose perplexity rose more than PCT percent over the base (default: 5)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from queerbias.report.compare import CompareOptions, compare_runs, write_outputs
    from queerbias.report.delta_tables import delta_table
    from queerbias.report.runs import load_runs, parse_run_arg
    from queerbias.report.tables import to_markdown

    if len(args.model or args.runs) < 2:
        raise QueerbiasError("need a BEFORE and at least one AFTER run")
    if args.resamples < 1:
        raise QueerbiasError("--resamples must be at least 1")
    runs = _scored_runs(args) if args.model else load_runs([parse_run_arg(arg) for arg in args.runs])
    options = CompareOptions(soft_test=args.soft_test, correction=args.correction,
                             n_resamples=args.resamples, seed=args.seed)
    document = compare_runs(runs[0], runs[1:], options, best_criterion=args.best, ppl_margin_pct=args.ppl_margin)
    write_outputs(document, args.out)
    print(to_markdown(delta_table(document)), end="")
    if document.get("best"):
        best = document["best"]
        print(f"\nbest checkpoint ({best['criterion']}): {best['label'] or 'none qualifies'}")
    print(f"\nwrote {args.out}/delta.{{json,csv,md,tex}} and plots")
    return 0


def _scored_runs(args: argparse.Namespace) -> list:
    """Score each --model on --pairs (same scoring options) into OUT/runs/, then load the runs."""
    from queerbias.report.runs import load_runs

    if args.runs:
        raise QueerbiasError("give either score directories or --model specs, not both")
    if not args.pairs:
        raise QueerbiasError("--model needs --pairs")
    from queerbias.commands.score import model_options, scoring_config, slug
    from queerbias.scoring.runner import (
        score_to_dir,  # heavy (torch); only this path needs it
    )

    labels = [slug(spec) for spec in args.model]
    if len(set(labels)) < len(labels):  # e.g. org-a/model and org-b/model
        labels = [f"{index:02d}-{label}" for index, label in enumerate(labels)]
    specs = []
    for index, (spec, label) in enumerate(zip(args.model, labels, strict=True)):
        out_dir = args.out / "runs" / f"{index:02d}-{slug(spec)}"
        score_to_dir(spec, args.pairs, out_dir, scoring_config(args), **model_options(args))
        specs.append((label, out_dir))
    return load_runs(specs)
