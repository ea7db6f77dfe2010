"""`queerbias gruff`: German pronoun fidelity (GRUFF) - generate items, score a model, compare runs.

Heavy modules (torch, pandas, scipy) are imported when a subcommand runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from queerbias.commands.score import (
    DEFAULT_MODEL,
    add_model_options,
    model_options,
    slug,
)
from queerbias.errors import QueerbiasError
from queerbias.report.choices import CORRECTIONS

SETTINGS = ("none", "d0", "d1", "d2", "d3", "d4", "d5")  # = generation.SETTINGS, kept light for --help
TEMPLATES_HELP = ("folder with the GRUFF task.tsv and context.tsv (e.g. a checkout's data/); "
                  "omitted: download them from TAI-HAMBURG/gruff into the cache")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "gruff", help="German pronoun fidelity (er, sie, en, xier) with distractors, before/after",
        description="GRUFF (Mewes, Lauscher & Gautam 2026): does the model reuse a person's pronoun "
                    "after 0-5 sentences about someone else? See docs/gruff.md.")
    sub = p.add_subparsers(dest="gruff_command", required=True, metavar="ACTION")

    gen = sub.add_parser("generate", help="write the (sampled) instances as CSV and print the counts")
    _generation_options(gen)
    gen.add_argument("--out", type=Path, required=True, help="CSV file for the instances")
    gen.set_defaults(func=generate_command)

    score = sub.add_parser("score", help="score a model: items.csv, summary.json/.md, accuracy.png")
    _generation_options(score)
    score.add_argument("--model", default=DEFAULT_MODEL, metavar="SPEC",
                       help=f"Hub id, local folder, PEFT adapter folder or embedded model (default {DEFAULT_MODEL})")
    score.add_argument("--out", type=Path, default=None, help="output directory (default runs/gruff/<model>)")
    score.add_argument("--bos", choices=("auto", "prepend", "none"), default="auto",
                       help="causal LMs: score after a BOS token; auto (default) does what the tokenizer does, "
                            "as the paper's script")
    score.add_argument("--batch-size", default="auto", help="sequences per batch, or auto (default)")
    score.add_argument("--overwrite", action="store_true", help="replace a different finished run in --out")
    score.add_argument("--no-progress", action="store_true")
    add_model_options(score)
    score.set_defaults(func=score_command)

    cmp = sub.add_parser("compare", help="paired accuracy change per setting: BEFORE then AFTER run dirs")
    cmp.add_argument("runs", nargs="+", metavar="RUN_DIR", help="BEFORE then AFTER GRUFF runs; LABEL=DIR names one")
    cmp.add_argument("--out", type=Path, required=True, help="directory for delta.json/.md/.csv/.tex, accuracy.png")
    cmp.add_argument("--correction", choices=CORRECTIONS, default="holm",
                     help="p-value correction across settings (default holm)")
    cmp.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples (default 10000)")
    cmp.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    cmp.set_defaults(func=compare_command)


def _generation_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--templates", default=None, metavar="DIR", help=TEMPLATES_HELP)
    p.add_argument("--settings", nargs="+", choices=SETTINGS, default=list(SETTINGS),
                   help="none = no context, d0 = introduction only, d1-d5 = distractor sentences (default all)")
    p.add_argument("--n", type=int, default=None,
                   help="items per setting and replicate, spread over cases and pronoun sets "
                        "(default: the paper's balanced set, 2,880 per context setting)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--replicates", type=int, default=1, help="independent balanced samples (the paper: 3)")
    p.add_argument("--pairing", choices=("default", "swapped"), default="default",
                   help="default: en with De-e nouns, xier with Sternchen nouns; swapped exchanges them")


def generate_command(args) -> int:
    from queerbias.fileio import atomic_write
    from queerbias.suites.gruff.api import instances_csv
    from queerbias.suites.gruff.generation import count_instances, generate, per_stratum
    from queerbias.suites.gruff.templates import load_templates

    templates = load_templates(args.templates)
    config = _config(args)
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


def score_command(args) -> int:
    from queerbias.suites.gruff.api import run_gruff

    out = args.out or Path("runs") / "gruff" / slug(args.model)
    batch_size = args.batch_size if args.batch_size == "auto" else int(args.batch_size)
    config = _config(args)
    run_gruff(args.model, args.templates, out, n=config.n, seed=config.seed, replicates=config.replicates,
              settings=config.settings, pairing=config.pairing, bos=args.bos, batch_size=batch_size,
              overwrite=args.overwrite, progress=not args.no_progress, **model_options(args))
    print((out / "summary.md").read_text(encoding="utf-8"))
    return 0


def compare_command(args) -> int:
    from queerbias.report.compare import CompareOptions
    from queerbias.report.runs import parse_run_arg
    from queerbias.report.tables import to_markdown
    from queerbias.suites.gruff.compare import (
        compare_gruff,
        load_gruff_run,
        write_compare,
    )
    from queerbias.suites.gruff.report import delta_table

    if len(args.runs) < 2:
        raise QueerbiasError("need a BEFORE and at least one AFTER run")
    if args.resamples < 1:
        raise QueerbiasError("--resamples must be at least 1")
    runs = [load_gruff_run(path, label) for label, path in map(parse_run_arg, args.runs)]
    options = CompareOptions(correction=args.correction, n_resamples=args.resamples, seed=args.seed)
    document = compare_gruff(runs[0], runs[1:], options)
    write_compare(document, runs, args.out)
    print(to_markdown(delta_table(document)), end="")
    print(f"\nwrote {args.out}/delta.{{json,md,csv,tex}} and accuracy.png")
    return 0


def _config(args):
    from queerbias.suites.gruff.generation import GenerationConfig

    return GenerationConfig(tuple(args.settings), args.pairing, args.n, args.seed, args.replicates)
