"""`queerbias compare`: did a mitigation change a model, per group, for any suite?

Runs are compared through the suite named in their summary.json (an old pair summary
without one is a pair run). numpy, scipy and matplotlib are imported when the command
runs, not when the CLI builds its parser.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from queerbias.commands.run import add_model_options, model_options
from queerbias.errors import QueerbiasError
from queerbias.options import add_arguments, from_args
from queerbias.outputs import path_arg, spec_arg
from queerbias.report.options import CompareOptions
from queerbias.report.tables import to_markdown
from queerbias.suites.paths import checked_out, slug
from queerbias.suites.registry import DEFAULT_SUITE, get_declaration, get_suite

#: the default suite's settings that `compare --model` does not take: the sample seed is 0, as
#: --seed is the bootstrap's
SCORE_SETTINGS_SKIPPED = ("seed",)


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
    default = get_declaration(DEFAULT_SUITE)
    p.add_argument("--model", action="append", default=[], metavar="SPEC", type=spec_arg,
                   help=f"evaluate this model on --pairs first, as `queerbias run {default.name}` (repeat; the "
                        "first is BEFORE)")
    p.add_argument("--pairs", type=spec_arg, help=f"the data to evaluate the --model specs on ({default.data_help})")
    add_model_options(p)
    add_arguments(p, default.Settings, skip=SCORE_SETTINGS_SKIPPED)
    p.set_defaults(func=run)


def add_compare_arguments(p: argparse.ArgumentParser, runs_help: str | None = None) -> None:
    """The run folders, --out and the comparison's options (`report.options.CompareOptions`)."""
    p.add_argument("runs", nargs="*", metavar="RUN_DIR",
                   help=runs_help or "BEFORE then AFTER run directories of one suite; LABEL=DIR names a column "
                                     "(default: directory name)")
    p.add_argument("--out", required=True, type=path_arg, help="directory for delta.json/.csv/.md/.tex and plots")
    add_arguments(p, CompareOptions)


def run(args: argparse.Namespace) -> int:
    options = from_args(CompareOptions, args)  # before any run is scored or loaded
    if args.model:
        return compare_folders(_scored_runs(args), options, args.out)
    return compare_command(args, options=options)


def compare_command(args: argparse.Namespace, suites: tuple[str, ...] = (), options: CompareOptions | None = None
                    ) -> int:
    """The run folders given (of one of `suites`, when an alias names them), compared, written and printed."""
    from queerbias.comparison.runs import parse_run_arg  # pandas: when the command runs, as the comparison

    options = options or from_args(CompareOptions, args)

    if len(args.runs) < 2:
        raise QueerbiasError("need a BEFORE and at least one AFTER run")
    specs = [parse_run_arg(arg) for arg in args.runs]
    args.out = checked_out(args.out, [path for _, path in specs])
    return compare_folders(specs, options, args.out, suites)


def compare_folders(specs: list[tuple[str, Path]], options: CompareOptions, out: Path, suites: tuple[str, ...] = ()
                    ) -> int:
    """Load the runs (label, folder), refuse one of another suite than `suites` (when given), compare, write the
    delta files and print the table."""
    from queerbias.comparison import compare, delta_tables, runs  # numpy, scipy, matplotlib: when it runs

    records = runs.load_runs(specs)
    for record in records:
        if suites and record.suite.name not in suites:
            raise QueerbiasError(f"{record.path} is a {record.suite.name} run, not a {' or '.join(suites)} run; "
                                 "use queerbias compare")
    document = compare.compare_runs(records[0], records[1:], options)
    compare.write_outputs(document, out)
    print(to_markdown(delta_tables.delta_table(document)), end="")
    if document.get("best"):
        best = document["best"]
        print(f"\nbest checkpoint ({best['criterion']}): {best['label'] or 'none qualifies'}")
    print(f"\nwrote {out}/delta.{{json,csv,md,tex}} and plots")
    return 0


def _scored_runs(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """Score each --model on --pairs (same scoring options) into OUT/runs/; (label, folder) of each."""
    if args.runs:
        raise QueerbiasError("give either run directories or --model specs, not both")
    if len(args.model) < 2:
        raise QueerbiasError("need a BEFORE and at least one AFTER run")
    if not args.pairs:
        raise QueerbiasError("--model needs --pairs")
    args.out = checked_out(args.out, [args.pairs, *args.model])
    from queerbias.suites.store import run_to_dir  # pandas: after the checks, so a refusal comes first

    suite = get_suite(DEFAULT_SUITE)
    given = argparse.Namespace(**{**vars(args), **dict.fromkeys(SCORE_SETTINGS_SKIPPED)})
    settings = from_args(suite.Settings, given)  # checked before any model loads

    labels = [slug(spec) for spec in args.model]
    if len(set(labels)) < len(labels):  # e.g. org-a/model and org-b/model
        labels = [f"{index:02d}-{label}" for index, label in enumerate(labels)]
    specs = []
    for index, (spec, label) in enumerate(zip(args.model, labels, strict=True)):
        out_dir = args.out / "runs" / f"{index:02d}-{slug(spec)}"
        run_to_dir(suite, spec, args.pairs, out_dir, settings, **model_options(args))
        specs.append((label, out_dir))
    return specs
