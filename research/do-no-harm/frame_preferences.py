"""On which side of 0 a model puts each group, frame by frame, in the training pairs (issue 32).

    python bench/frame_preferences.py [--model embedded:gemma-3-270m] [--per 2]
        [--sets queerbias-de-frames:train queerbias-de-frames-contrary:train] [--groups bisexual,lesbian]
        [--section frame-preferences] [--threads 2]

A shrinking objective (`equalise.keep`) moves mostly the identity phrase's offset, which every
pair of a group shares. Where a group's training pairs sit mostly on one side of 0, shrinking them
lifts the whole group, and its pairs in a new frame that sat near 0 cross to the other side. This
scores `--per` seeded pairs of every (group, frame) of the given registered sets (their own frame
keys) on the model, as `queerbias score` does, and prints per group: the frames, the mean of the
frames' mean d, the share of frames whose mean d is below 0 (anti-stereotypical), and the lowest
and highest frame mean.
"""

from __future__ import annotations

import argparse
import importlib
import random
import statistics
from collections import defaultdict

import torch
from benchmarks_md import markdown_table, write_section

from queerbias import api
from queerbias.pairs.registry import get_benchmark
from queerbias.pairs.resolve import load_pairs
from queerbias.pairs.schema import PairSet


def frame_keys(name: str) -> dict[str, dict[str, str]]:
    """pair id -> split keys of a registered set (its `split_keys` function)."""
    module, _, function = get_benchmark(name).split_keys.partition(":")
    return getattr(importlib.import_module(module), function)()


def sampled(specs: list[str], groups: set[str] | None, per: int, seed: int) -> tuple[list, dict[str, str]]:
    """`per` pairs of every (group, frame) of each set, and each pair's frame (named with its set)."""
    chosen, frame_of = [], {}
    for spec in specs:
        name = spec.partition(":")[0]
        keys = frame_keys(name)
        cells: dict[tuple[str, str], list] = defaultdict(list)
        for pair in load_pairs(spec).pairs:
            if groups is None or pair.group in groups:
                cells[(pair.group, keys[pair.pair_id]["frame"])].append(pair)
        rng = random.Random(seed)
        for (_, frame), pairs in sorted(cells.items()):
            for pair in rng.sample(pairs, min(per, len(pairs))):
                chosen.append(pair)
                frame_of[pair.pair_id] = f"{name}/{frame}"
    return chosen, frame_of


def group_rows(rows, frame_of: dict[str, str]) -> list[list[str]]:
    """Per group: frames, mean of frame means, % frames below 0, lowest and highest frame mean."""
    by_frame: dict[tuple[str, str], list[float]] = defaultdict(list)
    for row in rows.itertuples():
        by_frame[(row.group, frame_of[row.pair_id])].append(row.score_more - row.score_less)
    by_group: dict[str, list[float]] = defaultdict(list)
    for (group, _), ds in by_frame.items():
        by_group[group].append(statistics.fmean(ds))
    return [[group, str(len(means)), f"{statistics.fmean(means):+.2f}",
             f"{100 * sum(m < 0 for m in means) / len(means):.0f}%", f"{min(means):+.2f}", f"{max(means):+.2f}"]
            for group, means in sorted(by_group.items())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="embedded:gemma-3-270m")
    parser.add_argument("--sets", nargs="+",
                        default=["queerbias-de-frames:train", "queerbias-de-frames-contrary:train"])
    parser.add_argument("--groups", help="comma-separated groups (default: all)")
    parser.add_argument("--per", type=int, default=2, help="pairs per group and frame")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--section", help="the BENCHMARKS.md section it writes (none: print only)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    groups = set(args.groups.split(",")) if args.groups else None
    chosen, frame_of = sampled(args.sets, groups, args.per, args.seed)
    run = api.score(args.model, PairSet("frame-preferences", chosen), progress=False)
    command = " ".join(["python bench/frame_preferences.py", "--model", args.model, "--per", str(args.per),
                        "--sets", *args.sets] + (["--groups", args.groups] if args.groups else []))
    text = "\n".join([
        f"`{command}`: {len(chosen)} pairs, torch {torch.__version__}, {args.threads} thread(s).", "",
        "Per identity group over the frames of the training sets: mean d per frame (nats, d > 0 prefers the "
        "stereotypical sentence), then over the frames.", "",
        *markdown_table(["group", "frames", "mean d", "frames below 0", "lowest", "highest"],
                        [False, True, True, True, True, True], group_rows(run.rows(), frame_of))])
    print(text)
    if args.section:
        write_section(args.section, text)


if __name__ == "__main__":
    main()
