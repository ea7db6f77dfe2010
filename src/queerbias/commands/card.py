"""`queerbias card RUN`: the Hub model card of a training run, written again from the run folder."""

from __future__ import annotations

from queerbias.outputs import output_path, path_arg, run_files


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "card", help="write the Hugging Face model card of a training run (RUN/final/README.md)",
        description="Write the model card of a `queerbias train` run from its own files (config.yaml, "
                    "metrics.jsonl, compare/<benchmark>/delta.json): Hub metadata with a model-index of the "
                    "before/after bias figures, the method, the data, the before/after table, perplexity, "
                    "limitations and intended use. A run that did not finish gets a card that says so. "
                    "Training writes the card itself; this command writes it again. See docs/training.md.")
    p.add_argument("run", type=path_arg, metavar="RUN", help="the training run folder (output_dir)")
    p.add_argument("--out", type=path_arg, help="where to write the card (default: RUN/final/README.md)")
    p.set_defaults(func=run)


def run(args) -> int:
    from queerbias.train.card import CARD_FILE, write_card  # torch, pandas: when the command runs

    if args.out is not None:  # the card may replace itself, never a file of the run
        args.out = output_path(args.out, run_files(args.run, except_=[args.run / "final" / CARD_FILE]), file=True)
    path, incomplete = write_card(args.run, args.out)
    print(f"wrote {path}" + (f" (evaluation incomplete: {'; '.join(incomplete)})" if incomplete else ""))
    return 0
