"""`queerbias score`: the alias of `queerbias run pairs`, for one or more models.

Flags are the pair suite's settings (scoring method, sample, ...) plus `--pairs` for the
data; several `--model`s are scored into subfolders and set side by side in scores.md.
Heavy modules are imported when the command runs.
"""

from __future__ import annotations

from pathlib import Path

from queerbias.commands.run import DEFAULT_MODEL, add_model_options, evaluate
from queerbias.fileio import atomic_write
from queerbias.options import add_arguments, from_args
from queerbias.outputs import path_arg, spec_arg
from queerbias.suites.pairs.declaration import Pairs, PairSettings
from queerbias.suites.paths import checked_out, slug


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "score", help="score models on sentence pairs (WinoQueer method; = run pairs)",
        description="Score one or more models on a pair benchmark. Defaults reproduce the "
                    "WinoQueer reference scripts; every deviation is recorded in the output.")
    p.add_argument("--model", action="append", default=None, metavar="SPEC", type=spec_arg,
                   help="Hub id, local folder, PEFT adapter folder or embedded:gemma-3-270m "
                        f"(repeatable; default {DEFAULT_MODEL})")
    p.add_argument("--pairs", dest="data", default=Pairs.data_default, type=spec_arg,
                   help=f"registered benchmark name or a CSV/TSV/JSONL file (default {Pairs.data_default})")
    p.add_argument("--out", default=None, type=path_arg, help="output directory (default runs/score/<model>)")
    add_model_options(p)
    add_arguments(p, PairSettings)
    p.add_argument("--overwrite", action="store_true", help="replace a finished run in --out")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    settings = from_args(PairSettings, args)  # checked before any model loads
    models = args.model or [DEFAULT_MODEL]
    root = checked_out(args.out if args.out is not None else
                       Path("runs") / "score" / (slug(models[0]) if len(models) == 1 else "multi"),
                       (None if Path(args.data).is_dir() else args.data, *models))  # a folder: no pair file
    from queerbias.distributed import process_state  # torch: after the checks, so a refusal comes first

    summaries = [(spec, evaluate(Pairs, args, spec, root if len(models) == 1 else root / slug(spec), settings))
                 for spec in models]
    if len(models) > 1 and process_state().is_main_process:
        from queerbias.suites.pairs.paper_tables import render_score_tables  # matplotlib: several models only

        tables = render_score_tables(summaries)
        for ext, text in tables.items():
            atomic_write(root / f"scores.{ext}", text)
        print(tables["md"])
    return 0
