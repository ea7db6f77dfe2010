"""`queerbias lou lm|classify|compare`: aliases of `queerbias run lou`, `queerbias run lou-classifier`
and `queerbias compare` for gender-fair German (Lou), with their historical flags.

`lm` and `classify` take several --model; `classify --train` fine-tunes each model per task
first, and several classifiers get a ranking-consistency report. Only the argument parser is
built at start-up; torch and the suite load when a subcommand runs.
"""

from __future__ import annotations

from pathlib import Path

from queerbias.commands.compare import add_compare_arguments, compare_command
from queerbias.commands.run import DEFAULT_MODEL, add_run_arguments, evaluate
from queerbias.errors import QueerbiasError
from queerbias.fileio import atomic_write, dump_json_strict
from queerbias.options import from_args
from queerbias.suites.lou.data import lou_spec, resolve_tasks
from queerbias.suites.lou.declaration import Lou, LouClassifier, LouClassifierSettings, LouSettings
from queerbias.suites.paths import checked_out, slug

#: the historical flag names of `lou lm|classify`, kept as deprecated aliases
ALIASES = {"tasks": ("--task",), "sample": ("--n",), "n_resamples": ("--resamples",)}


def register(subparsers) -> None:
    p = subparsers.add_parser(
        Lou.name, help="gender-fair German (Lou): LM preference, classifier stability, before/after",
        description="Lou (Waldis et al., EMNLP 2024): German texts with six gender-fair reformulations. "
                    "See docs/lou.md.")
    views = p.add_subparsers(dest="view", required=True, metavar="VIEW")

    lm = views.add_parser("lm", help="does a masked or causal LM find reformulations as likely as originals? "
                                     "(= queerbias run lou)")
    add_run_arguments(lm, Lou, aliases=ALIASES, model_help=f"model to score (repeatable; default {DEFAULT_MODEL})",
                      several_models=True)
    lm.set_defaults(func=run_lm)

    cl = views.add_parser("classify", help="flip rate, macro-F1 and certainty of sequence classifiers "
                                           "(= queerbias run lou-classifier)")
    add_run_arguments(cl, LouClassifier, aliases=ALIASES, several_models=True,
                      model_help="fine-tuned classifier (path or Hub id), or with --train a base model (repeatable)")
    cl.add_argument("--train", action="store_true",
                    help="fine-tune each --model on each task's train split first (docs/lou.md: recipe)")
    cl.add_argument("--epochs", type=int, default=5)
    cl.add_argument("--lr", type=float, default=2e-5)
    cl.add_argument("--train-batch-size", type=int, default=16)
    cl.add_argument("--train-limit", type=int, default=None, help="train on a seeded subset of N examples")
    cl.add_argument("--dev-limit", type=int, default=None, help="select epochs on a seeded subset of N dev examples")
    cl.set_defaults(func=run_classify)

    cmp = views.add_parser("compare", help="paired before/after tests on LM-view or classifier-view runs "
                                           "(= queerbias compare)")
    add_compare_arguments(cmp, runs_help="BEFORE then AFTER `lou lm` (or all `lou classify`) directories; "
                                         "LABEL=DIR names a run (default: directory name)")
    cmp.set_defaults(func=lambda args: compare_command(args, (Lou.name, LouClassifier.name)))


def model_labels(specs: list[str]) -> list[str]:
    """One label per --model for the consistency report: the spec as given, with its position
    added when the same spec is given twice (folder basenames would merge runs/x/final and
    runs/y/final)."""
    counts = {spec: specs.count(spec) for spec in specs}
    return [spec if counts[spec] == 1 else f"{spec} (#{i + 1})" for i, spec in enumerate(specs)]


def _out_dirs(args, view: str, specs: list[str]) -> list[Path]:
    root = checked_out(args.out if args.out is not None else
                       Path("runs") / Lou.name / view / (slug(specs[0]) if len(specs) == 1 else "multi"),
                       (args.data, *specs))
    return [root] if len(specs) == 1 else [root / f"{i:02d}-{slug(spec)}" for i, spec in enumerate(specs)]


def run_lm(args) -> int:
    suite, settings = Lou, from_args(LouSettings, args)
    specs = args.model or [DEFAULT_MODEL]
    for spec, out in zip(specs, _out_dirs(args, "lm", specs), strict=True):
        evaluate(suite, args, spec, out, settings)
    return 0


def run_classify(args) -> int:
    from queerbias.distributed import process_state  # torch: when the command runs
    from queerbias.suites.lou import finetune, metrics, tables  # transformers, scipy: when the command runs

    if not args.model:
        raise QueerbiasError("name the classifier(s) with --model")
    suite, settings = LouClassifier, from_args(LouClassifierSettings, args)
    outs = _out_dirs(args, "classify", args.model)
    tasks = resolve_tasks(list(settings.tasks), args.data)
    if not args.train and len(tasks) > 1:
        raise QueerbiasError("a fine-tuned classifier knows one task: give one --task, or --train to fine-tune per task")
    recipe = finetune.Recipe(epochs=args.epochs, learning_rate=args.lr, batch_size=args.train_batch_size,
                    max_length=settings.max_length, seed=settings.seed, train_limit=args.train_limit,
                    dev_limit=args.dev_limit)
    load = {"dtype": args.dtype, "trust_remote_code": args.trust_remote_code,
            "allow_pickle_weights": args.allow_pickle_weights}
    summaries = {}
    for spec, out, label in zip(args.model, outs, model_labels(args.model), strict=True):
        parts = []
        for task in tasks:
            model = spec
            if args.train:
                model = str(finetune.finetune(spec, task, out / "models" / task, recipe, data_dir=args.data,
                                     progress=not args.no_progress, **load))
            target = out if len(tasks) == 1 else out / task
            task_settings = LouClassifierSettings(**{**settings.__dict__, "tasks": (task,)})
            parts.append(evaluate(suite, args, model, target, task_settings, extra_meta={"base": spec}))
        summaries[label] = {"tasks": {k: v for part in parts for k, v in part["tasks"].items()}}
    if len(summaries) > 1 and process_state().is_main_process:
        root = outs[0].parent
        document = metrics.ranking_consistency(summaries, lou_spec().strategies)
        atomic_write(root / "consistency.md", tables.consistency_markdown(document))
        atomic_write(root / "consistency.json", dump_json_strict(document, "consistency"))
        print((root / "consistency.md").read_text(encoding="utf-8"))
    return 0
