"""`queerbias score`: per-pair scores and per-identity bias figures for one or more models."""

from __future__ import annotations

import re
from pathlib import Path

from queerbias.cli import batch_size, output_folder, positive_int
from queerbias.scoring.config import SCORING_CHOICES, ScoringConfig

DEFAULT_MODEL = "embedded:gemma-3-270m"
DEFAULT_PAIRS = "queerbias-de"


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "score", help="score models on sentence pairs (WinoQueer method)",
        description="Score one or more models on a pair benchmark. Defaults reproduce the "
                    "WinoQueer reference scripts; every deviation is recorded in the output.")
    p.add_argument("--model", action="append", default=None, metavar="SPEC",
                   help="Hub id, local folder, PEFT adapter folder or embedded:gemma-3-270m "
                        f"(repeatable; default {DEFAULT_MODEL})")
    p.add_argument("--pairs", default=DEFAULT_PAIRS,
                   help=f"registered benchmark name or a CSV/TSV/JSONL file (default {DEFAULT_PAIRS})")
    p.add_argument("--out", type=output_folder, default=None,
                   help="output directory (default runs/score/<model>)")
    add_model_options(p)
    add_scoring_options(p)
    p.add_argument("--batch-size", type=batch_size, default="auto",
                   help="sequences per batch, or auto (default)")
    p.add_argument("--sample", type=positive_int, default=None, help="score a seeded subset of N pairs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--duplicates", choices=("error", "keep", "drop"), default="error",
                   help="rows repeating another row or pair id")
    p.add_argument("--identical", choices=("error", "keep", "drop"), default="error",
                   help="pairs whose two sentences are the same, as text or as the model's tokens "
                        "(the reference counts them as ties)")
    p.add_argument("--overwrite", action="store_true", help="replace a finished run in --out")
    p.add_argument("--chunk-pairs", type=positive_int, default=128,
                   help="pairs scored between two saves of progress (resume granularity)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def add_model_options(p) -> None:
    """Loading options shared by every command that takes --model."""
    p.add_argument("--kind", choices=("masked", "causal"), default=None,
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
                   help="also load pickle (.bin) checkpoints, not only safetensors")


def add_scoring_options(p) -> None:
    """The scoring method flags; their defaults reproduce the WinoQueer reference."""
    group = p.add_argument_group("scoring method (defaults = reference)")
    for name, choices in SCORING_CHOICES.items():
        group.add_argument(f"--{name}", choices=choices, default=getattr(ScoringConfig(), name))
    group.add_argument("--decimals", type=int, default=3, help="rounding before comparing (3)")
    long = group.add_mutually_exclusive_group()
    long.add_argument("--truncate", dest="long_sentences", action="store_const", const="truncate",
                      default="error", help="score only the first tokens of a sentence longer "
                                            "than the model takes (default: refuse it)")
    long.add_argument("--skip-long", dest="long_sentences", action="store_const", const="skip",
                      help="leave out pairs with a sentence longer than the model takes")


def scoring_config(args) -> ScoringConfig:
    return ScoringConfig(**{name: getattr(args, name) for name in SCORING_CHOICES},
                         decimals=args.decimals, long_sentences=args.long_sentences)


def model_options(args) -> dict:
    return {"kind": args.kind, "force_kind": args.force_kind, "dtype": args.dtype,
            "trust_remote_code": args.trust_remote_code,
            "allow_pickle_weights": args.allow_pickle_weights}


def slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", spec.rstrip("/").split("/")[-1].replace(":", "-"))


def output_root(args) -> Path:
    """--out, or runs/score/<model>; checked to be a folder we can write before any work."""
    from queerbias.fileio import require_output_dir

    models = args.model or [DEFAULT_MODEL]
    root = args.out or Path("runs") / "score" / (slug(models[0]) if len(models) == 1 else "multi")
    return require_output_dir(root)


def run(args) -> int:
    from queerbias.distributed import process_state
    from queerbias.pairs.io import load_pairs
    from queerbias.scoring.runner import score_to_dir

    models = args.model or [DEFAULT_MODEL]
    config = scoring_config(args)
    root = output_root(args)
    pair_set = load_pairs(args.pairs, duplicates=args.duplicates, identical=args.identical)
    main_process = process_state().is_main_process
    summaries = []
    for spec in models:
        out = root if len(models) == 1 else root / slug(spec)
        summary = score_to_dir(spec, pair_set, out, config, batch_size=args.batch_size,
                               sample=args.sample, seed=args.seed, identical=args.identical,
                               overwrite=args.overwrite,
                               chunk_pairs=args.chunk_pairs,
                               progress=not args.no_progress, **model_options(args))
        summaries.append((spec, summary))
        if main_process:
            print((out / "summary.md").read_text())
    if len(models) > 1 and main_process:
        from queerbias.fileio import atomic_write
        from queerbias.report.score_tables import render_score_tables

        tables = render_score_tables(summaries)
        for ext, text in tables.items():
            atomic_write(root / f"scores.{ext}", text)
        print(tables["md"])
    return 0
