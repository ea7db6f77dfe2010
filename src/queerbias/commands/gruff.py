"""`queerbias gruff`: German pronoun fidelity (GRUFF): generate items, and aliases of
`queerbias run gruff` (score) and `queerbias compare` (compare) with their historical flags.

Heavy modules (torch, pandas, scipy) are imported when a subcommand runs.
"""

from __future__ import annotations

import argparse

from queerbias.commands.compare import add_compare_arguments, compare_command
from queerbias.commands.run import add_run_arguments, evaluate, out_dir
from queerbias.fileio import atomic_write
from queerbias.options import add_arguments, from_args
from queerbias.outputs import output_path, path_arg
from queerbias.suites.gruff.declaration import Gruff, GruffSettings
from queerbias.suites.gruff.generation import count_instances, generate, per_stratum
from queerbias.suites.gruff.templates import load_templates

TEMPLATES_HELP = ("folder with the GRUFF task.tsv and context.tsv (e.g. a checkout's data/); "
                  "omitted: download them from TAI-HAMBURG/gruff into the cache")
#: the historical flag name of `gruff generate|score`, kept as a deprecated alias
ALIASES = {"sample": ("--n",)}


def register(subparsers) -> None:
    p = subparsers.add_parser(
        Gruff.name, help="German pronoun fidelity (er, sie, en, xier) with distractors, before/after",
        description="GRUFF (Mewes, Lauscher & Gautam 2026): does the model reuse a person's pronoun "
                    "after 0-5 sentences about someone else? See docs/gruff.md.")
    sub = p.add_subparsers(dest="gruff_command", required=True, metavar="ACTION")

    gen = sub.add_parser("generate", help="write the (sampled) instances as CSV and print the counts")
    gen.add_argument("--templates", default=None, metavar="DIR", type=path_arg, help=TEMPLATES_HELP)
    add_arguments(gen, GruffSettings, skip=("bos", "batch_size", "chunk_items"), aliases=ALIASES)
    gen.add_argument("--out", type=path_arg, required=True, help="CSV file for the instances")
    gen.set_defaults(func=generate_command)

    score = sub.add_parser("score", help="score a model (= queerbias run gruff): items.csv, summary.json/.md/.png")
    add_run_arguments(score, Gruff, data_flag="--templates", aliases=ALIASES)
    score.set_defaults(func=score_command)

    cmp = sub.add_parser("compare", help="paired accuracy change per setting (= queerbias compare)")
    add_compare_arguments(cmp, runs_help="BEFORE then AFTER GRUFF runs; LABEL=DIR names one")
    cmp.set_defaults(func=lambda args: compare_command(args, (Gruff.name,)))


def generate_command(args: argparse.Namespace) -> int:
    from queerbias.suites.gruff.tables import instances_csv  # pandas, scipy: when the command runs

    config = from_args(GruffSettings, args).generation()
    args.out = output_path(args.out, [args.templates], file=True)
    templates = load_templates(args.templates)
    items = generate(templates, config)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(args.out, instances_csv(items))
    print(f"templates {templates.checksum}: {len(templates.tasks)} task, {len(templates.contexts)} context")
    print(f"{'setting':8} {'instances':>12} {'per stratum':>12} {'sampled':>8}")
    for setting in config.settings:
        sampled = sum(1 for item in items if item.setting == setting)
        k = per_stratum(setting)
        print(f"{setting:8} {count_instances(templates, setting):>12,} {'all' if k is None else k:>12} {sampled:>8,}")
    print(f"wrote {len(items):,} instances to {args.out}")
    return 0


def score_command(args: argparse.Namespace) -> int:
    settings = from_args(GruffSettings, args)
    evaluate(Gruff, args, args.model, out_dir(args, Gruff, args.model), settings)
    return 0
