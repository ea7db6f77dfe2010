"""Score a training run's final model and its base on queerbias-de-shapes:validation and compare them.

    python research/association/validate.py --run runs/train/RUN [--name NAME] [--threads 2]
        [--out runs/research/association/validation] [--sample-frames N]

Validation is where checkpoints and recipes are chosen (issue 53): score as often as needed. The base is
scored once per model (OUT/base). Prints the per-group table (`tables.group_table`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
import yaml
from tables import group_table

import queerbias as qb

SPEC = "queerbias-de-shapes:validation"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--name", help="the candidate's folder name (default: the run folder's)")
    parser.add_argument("--out", type=Path, default=Path("runs/research/association/validation"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--sample-frames", type=int, default=None)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    options = {"sample": args.sample_frames, "sample_unit": "frame"} if args.sample_frames else {}
    suffix = f"-sample{args.sample_frames}" if args.sample_frames else ""
    model = yaml.safe_load((args.run / "config.yaml").read_text(encoding="utf-8"))["model"]
    name = (args.name or args.run.name) + suffix
    base = qb.score(model, SPEC, out=args.out / f"base{suffix}", label="base", **options)
    after = qb.score(str(args.run / "final"), SPEC, out=args.out / name, label=name, **options)
    qb.compare(base, after, out=args.out / f"{name}-compare")
    print(group_table(args.out / f"{name}-compare", args.out / f"base{suffix}", args.out / name))


if __name__ == "__main__":
    main()
