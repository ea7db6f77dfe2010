"""`queerbias run SUITE`: evaluate a model on any registered suite into a run folder.

One subcommand per suite, its options generated from the suite's settings (its light
declaration: no suite implementation loads to build the parser). The suites' own commands
(`score`, `gruff score`, `lou lm|classify`, `gifi run`, in their folders) are thin aliases
over the same functions, keeping their historical flag names.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from queerbias import families, options
from queerbias.outputs import path_arg, spec_arg
from queerbias.suites.paths import checked_out, default_out
from queerbias.suites.registry import get_declaration, get_suite, names

DEFAULT_MODEL = "embedded:gemma-3-270m"


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "run", help=f"evaluate a model on a registered suite ({', '.join(names())})",
        description="Evaluate one model on one suite: resumable, sharded under accelerate launch, "
                    "summary.json written last. `queerbias suites` lists the suites; docs/new-suite.md "
                    "says how to add one.")
    sub = p.add_subparsers(dest="suite", required=True, metavar="SUITE")
    for name in names():
        suite = get_declaration(name)
        q = sub.add_parser(name, help=suite.description, description=suite.description)
        add_run_arguments(q, suite)
        q.set_defaults(func=run_command)


def add_run_arguments(p: argparse.ArgumentParser, suite, data_flag: str = "--data", aliases: dict | None = None,
                      model_help: str | None = None, several_models: bool = False) -> None:
    """--model (repeatable with `several_models`), the data flag, --out, the suite's settings (`aliases`:
    deprecated historical names of some), model loading, --overwrite, --no-progress."""
    p.add_argument("--model", default=None if several_models else DEFAULT_MODEL, metavar="SPEC",
                   action="append" if several_models else "store", type=spec_arg,
                   help=model_help or f"Hub id, local folder, PEFT adapter folder or {DEFAULT_MODEL} (default)")
    p.add_argument(data_flag, dest="data", default=None, type=spec_arg,
                   help=f"{suite.data_help} (default: {suite.data_default or 'the cached copy'})")
    p.add_argument("--out", default=None, type=path_arg, help=f"output directory (default runs/{suite.name}/<model>)")
    options.add_arguments(p, suite.Settings, aliases=aliases)
    add_model_options(p)
    p.add_argument("--overwrite", action="store_true", help="replace a different finished run in --out")
    p.add_argument("--no-progress", action="store_true")


def add_model_options(p) -> None:
    """Loading options shared by every command that takes --model."""
    p.add_argument("--kind", choices=families.names(), default=None,
                   help="masked or causal, when the config does not say; contradicting the "
                        "config's architecture needs --force-kind")
    p.add_argument("--force-kind", action="store_true",
                   help="score with --kind even where the architecture is of the other kind")
    p.add_argument("--dtype", choices=("float32", "bfloat16", "float16"), default="float32",
                   help="float32 (default, exact); bf16/fp16 are faster on GPUs but change "
                        "about 2-3%% of decisions")
    p.add_argument("--trust-remote-code", action="store_true",
                   help="run code shipped with a Hub model (off by default)")
    p.add_argument("--allow-pickle-weights", action="store_true",
                   help="read pickle (.bin) checkpoints that have no safetensors (with torch.load(weights_only=True), "
                        "tensors only)")
    p.add_argument("--lang", default=None, metavar="LANG",
                   help="models with language embeddings (XLM): the language id passed as langs (default: the "
                        "data's language)")


def model_options(args) -> dict:
    return {"kind": args.kind, "force_kind": args.force_kind, "dtype": args.dtype,
            "trust_remote_code": args.trust_remote_code, "allow_pickle_weights": args.allow_pickle_weights,
            "lang": args.lang}


def out_dir(args, suite, spec: str) -> Path:
    """--out, checked before any model loads; default runs/<suite>/<model>."""
    return checked_out(default_out(suite.name, spec) if args.out is None else args.out, (args.data, spec))


def evaluate(declared, args, spec: str, out: Path, settings=None, extra_meta: dict | None = None) -> dict:
    """Run `spec` on the suite (`declared`: its declaration) into `out` and print its summary.md (main process)."""
    from queerbias.distributed import process_state  # torch: when the command runs
    from queerbias.suites.store import run_to_dir  # pandas: when the command runs

    suite = get_suite(declared.name)
    settings = settings if settings is not None else options.from_args(suite.Settings, args)
    summary = run_to_dir(suite, spec, args.data, out, settings, extra_meta=extra_meta, overwrite=args.overwrite,
                         progress=not args.no_progress, **model_options(args))
    if process_state().is_main_process:
        print((out / "summary.md").read_text(encoding="utf-8"))
    return summary


def run_command(args) -> int:
    suite = get_declaration(args.suite)
    evaluate(suite, args, args.model, out_dir(args, suite, args.model))
    return 0
