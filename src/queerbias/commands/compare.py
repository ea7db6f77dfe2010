"""`queerbias compare`: did a mitigation change a model, per group, for any suite?

Runs are compared through the suite named in their summary.json (an old pair summary
without one is a pair run). numpy, scipy and matplotlib are imported when the command
runs, not when the CLI builds its parser.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from queerbias.commands.run import add_model_options, checked_out
from queerbias.errors import QueerbiasError
from queerbias.report.choices import BEST_CRITERIA, CORRECTIONS, SOFT_TESTS
from queerbias.suites.pairs.suite import PairSettings
from queerbias.suites.settings import add_arguments, from_args

#: `queerbias score`'s settings that `compare --model` takes; the sample seed is 0, as
#: --seed is the bootstrap's
SCORE_SETTINGS_SKIPPED = ("seed", "chunk_pairs")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "compare",
        help="paired tests of the change between runs of any suite (before vs. after mitigation)",
        description=(
            "Compare BEFORE with each AFTER run of the same suite on the same items: exact McNemar tests on "
            "binary flags, Wilcoxon signed-rank (or paired t) tests on continuous scores, paired bootstrap "
            "intervals, p-values corrected across groups. See docs/compare.md."
        ),
    )
    add_compare_arguments(p)
    p.add_argument("--model", action="append", default=[], metavar="SPEC",
                   help="score this model on --pairs first (repeat; the first is BEFORE)")
    p.add_argument("--pairs", help="pairs to score the --model specs on")
    add_model_options(p)
    add_arguments(p, PairSettings, skip=SCORE_SETTINGS_SKIPPED)
    p.set_defaults(func=run)


def add_compare_arguments(p: argparse.ArgumentParser, runs_help: str | None = None) -> None:
    """The run folders, --out and the test options every compare command shares."""
    p.add_argument("runs", nargs="*", metavar="RUN_DIR",
                   help=runs_help or "BEFORE then AFTER run directories of one suite; LABEL=DIR names a column "
                                     "(default: directory name)")
    p.add_argument("--out", required=True, type=Path, help="directory for delta.json/.csv/.md/.tex and plots")
    p.add_argument("--soft-test", choices=SOFT_TESTS, default="wilcoxon",
                   help="paired test on continuous scores (default: wilcoxon)")
    p.add_argument("--correction", choices=CORRECTIONS, default="holm",
                   help="p-value correction across groups: holm (family-wise) or bh (false discovery rate)")
    p.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples (default: 10000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    p.add_argument("--best", choices=BEST_CRITERIA, default=None,
                   help="pair runs: best-checkpoint criterion: lowest overall bias, closest to 50 (default), or "
                        "lowest distance to indifference (mean over groups of |bias - 50|); other suites use their own")
    p.add_argument("--ppl-margin", type=float, default=5.0, metavar="PCT",
                   help="exclude checkpoints whose perplexity rose more than PCT percent over the base (default: 5)")


MAX_RESAMPLES = 1_000_000  # a million resamples per cell already takes minutes


def run(args: argparse.Namespace) -> int:
    check_numbers(args.resamples, args.seed, args.ppl_margin)  # before any run is scored or loaded
    if args.model:
        return compare_and_print(_scored_runs(args), args)
    return compare_command(args)


def check_numbers(resamples: int, seed: int, ppl_margin: float, prefix: str = "--") -> None:
    """The comparison's numbers, before any work: a bounded number of resamples, a seed numpy
    takes, and a perplexity margin that is a number (NaN would switch the guard off)."""
    if not 1 <= resamples <= MAX_RESAMPLES:
        raise QueerbiasError(f"{prefix}resamples must be between 1 and {MAX_RESAMPLES:,}, got {resamples}")
    if seed < 0:
        raise QueerbiasError(f"{prefix}seed must be 0 or more, got {seed}")
    if not math.isfinite(ppl_margin) or ppl_margin < 0:
        raise QueerbiasError(f"{prefix}ppl-margin must be a finite percentage of 0 or more, got {ppl_margin}")


def compare_command(args: argparse.Namespace, suite: str | None = None) -> int:
    """Load the run folders (of `suite`, when an alias names one), compare, write and print."""
    from queerbias.report.runs import load_runs, parse_run_arg

    if len(args.runs) < 2:
        raise QueerbiasError("need a BEFORE and at least one AFTER run")
    specs = [parse_run_arg(arg) for arg in args.runs]
    checked_out(args.out, [path for _, path in specs])
    runs = load_runs(specs)
    if suite is not None:
        for record in runs:
            if record.suite.name not in (suite, *_views(suite)):
                raise QueerbiasError(f"{record.path} is a {record.suite.name} run, not a {suite} run; "
                                     "use queerbias compare")
    return compare_and_print(runs, args)


def _views(suite: str) -> tuple[str, ...]:
    return ("lou-classifier",) if suite == "lou" else ()


def compare_and_print(runs: list, args: argparse.Namespace) -> int:
    from queerbias.report.compare import CompareOptions, compare_runs, write_outputs
    from queerbias.report.delta_tables import delta_table
    from queerbias.report.tables import to_markdown

    check_numbers(args.resamples, args.seed, args.ppl_margin)
    options = CompareOptions(soft_test=args.soft_test, correction=args.correction, n_resamples=args.resamples,
                             seed=args.seed)
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
        raise QueerbiasError("give either run directories or --model specs, not both")
    if len(args.model) < 2:
        raise QueerbiasError("need a BEFORE and at least one AFTER run")
    if not args.pairs:
        raise QueerbiasError("--model needs --pairs")
    checked_out(args.out, [args.pairs, *args.model])
    from queerbias.commands.run import model_options, slug
    from queerbias.suites.pairs.suite import PairsSuite
    from queerbias.suites.store import run_to_dir

    given = argparse.Namespace(**{**vars(args), **dict.fromkeys(SCORE_SETTINGS_SKIPPED)})
    settings = from_args(PairSettings, given)  # checked before any model loads

    labels = [slug(spec) for spec in args.model]
    if len(set(labels)) < len(labels):  # e.g. org-a/model and org-b/model
        labels = [f"{index:02d}-{label}" for index, label in enumerate(labels)]
    specs = []
    for index, (spec, label) in enumerate(zip(args.model, labels, strict=True)):
        out_dir = args.out / "runs" / f"{index:02d}-{slug(spec)}"
        run_to_dir(PairsSuite(), spec, args.pairs, out_dir, settings, **model_options(args))
        specs.append((label, out_dir))
    return load_runs(specs)
