"""Seeded subsets of pair sets: the `--sample N --seed S` of every pair command and benchmark.

The subset is `random.Random(seed).sample(range(total), n)`, in the set's order: a function of
the number of pairs alone. So a reader that counts a file's pairs first (`io.read_pairs` with
`sample`) takes exactly the pairs that sampling the whole set takes, and every `--sample` run
published so far selects the same pairs, without parsing the rows it leaves out.

`sample_frames` takes whole frames instead (the same draw over the set's distinct frames, in order of
first appearance), every pair of each: the frame is the unit of the association and of the
frame-level tests (`suites.pairs.association`), so a sample of pairs would leave frames half filled.
"""

from __future__ import annotations

import random

from queerbias.errors import QueerbiasError
from queerbias.pairs.schema import Pair, PairSet


def chosen_indices(total: int, n: int | None, seed: int = 0) -> list[int] | None:
    """The positions (ascending) a seeded sample of n of `total` items keeps; None: all of them."""
    if n is None or n >= total:
        return None
    return sorted(random.Random(seed).sample(range(total), n))


def sample_pairs(pair_set: PairSet, n: int | None, seed: int = 0) -> PairSet:
    """A seeded subset of n pairs in their original order (the whole set when n is None), recorded
    in its meta (`sample`: n, seed, of how many)."""
    chosen = chosen_indices(len(pair_set), n, seed)
    if chosen is None:
        return pair_set
    return as_sample(pair_set, [pair_set.pairs[i] for i in chosen], n, seed, of=len(pair_set))


def as_sample(parent: PairSet, pairs: list[Pair], n: int, seed: int, of: int) -> PairSet:
    """`pairs`, sampled from `parent` (`of` pairs), named and recorded as such."""
    meta = {**parent.meta, "sample": {"n": n, "seed": seed, "of": of}}
    return PairSet(f"{parent.name}[sample {n}, seed {seed}]", pairs, parent.source, meta=meta)


def sample_frames(pair_set: PairSet, n: int | None, seed: int = 0) -> PairSet:
    """Every pair of a seeded subset of n of the set's frames (the whole set when n is None), recorded in
    its meta (`sample`: n, seed, of how many, unit frame)."""
    if n is None:
        return pair_set
    unnamed = next((pair for pair in pair_set.pairs if not pair.frame), None)
    if unnamed is not None:
        raise QueerbiasError(f"{pair_set.name}: pair {unnamed.pair_id} names no frame, so frames cannot be sampled "
                             "(sample pairs instead)")
    frames = list(dict.fromkeys(pair.frame for pair in pair_set.pairs))
    chosen = chosen_indices(len(frames), n, seed)
    if chosen is None:
        return pair_set
    kept = {frames[i] for i in chosen}
    meta = {**pair_set.meta, "sample": {"n": n, "seed": seed, "of": len(frames), "unit": "frame"}}
    return PairSet(f"{pair_set.name}[sample {n} frames, seed {seed}]",
                   [pair for pair in pair_set.pairs if pair.frame in kept], pair_set.source, meta=meta)
