"""`queerbias lou lm|classify|compare`: gender-fair German (Lou) before and after mitigation.

Only the argument parser is built at start-up; torch and the suite load when a
subcommand runs.
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

DATA_HELP = ("folder laid out like UKPLab/lou-gender-fair-reformulations (lou/<task>.jsonl, tasks/<task>/...); "
             "default: the cache copy, downloaded on first use (CC BY-NC 4.0)")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "lou", help="gender-fair German (Lou): LM preference, classifier stability, before/after",
        description="Lou (Waldis et al., EMNLP 2024): German texts with six gender-fair reformulations. "
                    "See docs/lou.md.")
    views = p.add_subparsers(dest="view", required=True, metavar="VIEW")

    lm = views.add_parser("lm", help="does a masked or causal LM find reformulations as likely as originals?")
    lm.add_argument("--model", action="append", default=None, metavar="SPEC",
                    help=f"model to score (repeatable; default {DEFAULT_MODEL})")
    _common(lm)
    lm.add_argument("--batch-size", default="auto", help="sequences per batch, or auto (default)")
    lm.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples (default 10000)")
    add_model_options(lm)
    lm.set_defaults(func=run_lm)

    cl = views.add_parser("classify", help="flip rate, macro-F1 and certainty of sequence classifiers")
    cl.add_argument("--model", action="append", required=True, metavar="SPEC",
                    help="fine-tuned classifier (path or Hub id), or with --train a base model (repeatable)")
    _common(cl)
    cl.add_argument("--max-length", type=int, default=300, help="GermEval texts: keep their first N tokens, as upstream (default 300)")
    cl.add_argument("--resamples", type=int, default=2_000,
                    help="bootstrap resamples for the ΔF1 and flip-rate intervals (default 2000)")
    cl.add_argument("--train", action="store_true",
                    help="fine-tune each --model on each task's train split first (docs/lou.md: recipe)")
    cl.add_argument("--epochs", type=int, default=5)
    cl.add_argument("--lr", type=float, default=2e-5)
    cl.add_argument("--train-batch-size", type=int, default=16)
    cl.add_argument("--train-limit", type=int, default=None, help="train on a seeded subset of N examples")
    cl.add_argument("--dev-limit", type=int, default=None, help="select epochs on a seeded subset of N dev examples")
    add_model_options(cl)
    cl.set_defaults(func=run_classify)

    cmp = views.add_parser("compare", help="paired before/after tests on LM-view or classifier-view runs")
    cmp.add_argument("runs", nargs="+", metavar="RUN_DIR",
                     help="BEFORE then AFTER `lou lm` (or all `lou classify`) directories; LABEL=DIR names a run "
                          "(default: directory name)")
    cmp.add_argument("--out", type=Path, required=True, help="directory for delta.json/.csv/.md/.tex and delta.png")
    cmp.add_argument("--correction", choices=CORRECTIONS, default="holm", help="across strategies (default holm)")
    cmp.add_argument("--resamples", type=int, default=10_000)
    cmp.add_argument("--seed", type=int, default=0)
    cmp.set_defaults(func=run_compare)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", type=Path, default=None, help=DATA_HELP)
    p.add_argument("--task", action="append", default=None, help="task (repeatable; default: all public tasks, or those in --data)")
    p.add_argument("--n", type=int, default=None, help="a seeded sample of N instances per task")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None, help="output directory (default runs/lou/<view>/<model>)")
    p.add_argument("--overwrite", action="store_true", help="replace a finished run in --out")
    p.add_argument("--no-progress", action="store_true")


def _out_dirs(args, view: str, specs: list[str]) -> list[Path]:
    root = args.out or Path("runs") / "lou" / view / (slug(specs[0]) if len(specs) == 1 else "multi")
    return [root] if len(specs) == 1 else [root / f"{i:02d}-{slug(spec)}" for i, spec in enumerate(specs)]


def run_lm(args) -> int:
    from queerbias.suites.lou.runner import run_lou

    specs = args.model or [DEFAULT_MODEL]
    batch_size = args.batch_size if args.batch_size == "auto" else int(args.batch_size)
    for spec, out in zip(specs, _out_dirs(args, "lm", specs), strict=True):
        run_lou(spec, args.data, out, tasks=args.task, n=args.n, seed=args.seed, batch_size=batch_size,
                n_resamples=args.resamples, overwrite=args.overwrite, progress=not args.no_progress,
                **model_options(args))
        print((out / "summary.md").read_text(encoding="utf-8"))
    return 0


def run_classify(args) -> int:
    import json

    from queerbias.fileio import atomic_write
    from queerbias.suites.lou import report
    from queerbias.suites.lou.data import resolve_tasks
    from queerbias.suites.lou.finetune import Recipe, finetune
    from queerbias.suites.lou.runner import ranking_consistency, run_classifier

    if args.kind:
        raise QueerbiasError("--kind applies to language models, not to sequence classifiers")
    if args.resamples < 1:
        raise QueerbiasError("--resamples must be at least 1")
    load = {k: v for k, v in model_options(args).items() if k != "kind"}
    outs = _out_dirs(args, "classify", args.model)
    tasks = resolve_tasks(args.task, args.data)
    if not args.train and len(tasks) > 1:
        raise QueerbiasError("a fine-tuned classifier knows one task: give one --task, or --train to fine-tune per task")
    recipe = Recipe(epochs=args.epochs, learning_rate=args.lr, batch_size=args.train_batch_size,
                    max_length=args.max_length, seed=args.seed, train_limit=args.train_limit,
                    dev_limit=args.dev_limit)
    summaries = {}
    for spec, out in zip(args.model, outs, strict=True):
        parts = []
        for task in tasks:
            model = spec
            if args.train:
                model = str(finetune(spec, task, out / "models" / task, recipe, data_dir=args.data,
                                     progress=not args.no_progress, **load))
            target = out if len(tasks) == 1 else out / task
            parts.append(run_classifier(model, args.data, target, tasks=[task], n=args.n, seed=args.seed,
                                        max_length=args.max_length, n_resamples=args.resamples,
                                        overwrite=args.overwrite,
                                        progress=not args.no_progress, extra_meta={"base": spec}, **load))
            print((target / "summary.md").read_text(encoding="utf-8"))
        summaries[slug(spec)] = {"tasks": {k: v for part in parts for k, v in part["tasks"].items()}}
    if len(summaries) > 1:
        root = outs[0].parent
        document = ranking_consistency(summaries)
        atomic_write(root / "consistency.md", report.consistency_markdown(document))
        atomic_write(root / "consistency.json", json.dumps(document, indent=2) + "\n")
        print((root / "consistency.md").read_text(encoding="utf-8"))
    return 0


def run_compare(args) -> int:
    from queerbias.report.compare import CompareOptions
    from queerbias.report.runs import parse_run_arg
    from queerbias.report.tables import to_markdown
    from queerbias.suites.lou.compare import compare_runs, load_run, write_outputs
    from queerbias.suites.lou.report import compare_overview

    if len(args.runs) < 2:
        raise QueerbiasError("need a BEFORE and at least one AFTER run")
    if args.resamples < 1:
        raise QueerbiasError("--resamples must be at least 1")
    runs = [load_run(label or path.name, path) for label, path in map(parse_run_arg, args.runs)]
    options = CompareOptions(correction=args.correction, n_resamples=args.resamples, seed=args.seed)
    document = compare_runs(runs[0], runs[1:], options)
    write_outputs(document, args.out)
    print(to_markdown(compare_overview(document)), end="")
    print(f"\nwrote {args.out}/delta.{{json,csv,md,tex,png}}")
    return 0
