"""Seeded subsets of pair sets: the `--sample N --seed S` of every pair command and benchmark."""

from __future__ import annotations

import random

from queerbias.pairs.schema import PairSet


def sample_pairs(pair_set: PairSet, n: int | None, seed: int = 0) -> PairSet:
    """A seeded subset of n pairs in their original order (the whole set when n is None), recorded
    in its meta (`sample`: n, seed, of how many)."""
    if n is None or n >= len(pair_set):
        return pair_set
    chosen = sorted(random.Random(seed).sample(range(len(pair_set)), n))
    meta = {**pair_set.meta, "sample": {"n": n, "seed": seed, "of": len(pair_set)}}
    return PairSet(f"{pair_set.name}[sample {n}, seed {seed}]",
                   [pair_set.pairs[i] for i in chosen], pair_set.source, meta=meta)
