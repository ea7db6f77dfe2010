"""`queerbias train`: mitigation fine-tuning with bias evaluation at every checkpoint."""

from __future__ import annotations

from queerbias.outputs import path_arg
from queerbias.train.checkpoints import training_folder
from queerbias.train.config import load_config


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "train", help="fine-tune a masked or causal LM and score bias at every checkpoint",
        description="Continue training a model (LoRA or full fine-tuning) on a corpus; score the "
                    "base model and every checkpoint on the configured benchmarks and held-out "
                    "perplexity, and compare them at the end. Rerun the same command to resume. "
                    "Under `accelerate launch` the same command trains on several processes. "
                    "See docs/training.md.")
    p.add_argument("--config", type=path_arg, required=True, help="YAML config (see configs/)")
    p.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                   help="override config keys, dotted for sections: lora.r=8 data.max_length=256")
    p.add_argument("--merge", action="store_true",
                   help="also export the adapter merged into the base model (config key merge)")
    p.set_defaults(func=run)


def run(args) -> int:
    overrides = list(args.overrides) + (["merge=true"] if args.merge else [])
    config = load_config(args.config, overrides)  # plain Python: a typo is reported before torch loads
    training_folder(config, args.config)  # refused here, before peft and the trainer are imported
    from queerbias.train.runner import run_training  # torch, peft and the trainer: after the checks

    run_training(config, args.config)
    return 0
