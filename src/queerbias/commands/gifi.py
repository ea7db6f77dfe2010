"""`queerbias gifi run|compare`: aliases of `queerbias run gifi` and `queerbias compare` for the
German Gender Inclusivity Fairness Index, with their historical flags (and `--config FILE`).

Torch and matplotlib are imported when a command runs.
"""

from __future__ import annotations

import argparse

from queerbias.commands.compare import add_compare_arguments, compare_command
from queerbias.commands.run import add_run_arguments, evaluate, out_dir
from queerbias.options import from_args
from queerbias.outputs import path_arg
from queerbias.suites.gifi.config import GifiConfig
from queerbias.suites.gifi.declaration import Gifi

#: the historical flag name of `gifi run`, kept as a deprecated alias
ALIASES = {"sample": ("--limit",)}


def register(subparsers) -> None:
    p = subparsers.add_parser(Gifi.name, help="GIFI-DE: gender inclusivity index of a generative model",
                              description="German version of GIFI (Shan, Diana & Zhou, ACL 2025). See docs/gifi.md.")
    sub = p.add_subparsers(dest="gifi_command", required=True, metavar="{run,compare}")

    run = sub.add_parser("run", help="generate and score one model on the seven dimensions (= queerbias run gifi)")
    add_run_arguments(run, Gifi, aliases=ALIASES, model_help="causal LM spec (default embedded:gemma-3-270m)")
    run.add_argument("--config", default=None, type=path_arg, help="YAML file with GIFI settings (the options below override it)")
    run.set_defaults(func=run_command)

    compare = sub.add_parser("compare", help="per-dimension changes between GIFI runs (= queerbias compare)")
    add_compare_arguments(compare, runs_help="BEFORE then AFTER GIFI directories; LABEL=DIR names a column")
    compare.set_defaults(func=lambda args: compare_command(args, (Gifi.name,)))


def run_command(args: argparse.Namespace) -> int:
    base = GifiConfig.from_yaml(args.config) if args.config else None
    settings = from_args(GifiConfig, args, base=base)
    evaluate(Gifi, args, args.model, out_dir(args, Gifi, args.model), settings)
    return 0
