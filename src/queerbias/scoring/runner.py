"""Score a pair set into an output directory: the pair suite through the run store.

`score_to_dir` is `queerbias score` from Python: the store (`suites.store.run_to_dir`)
makes it resumable after a kill and sharded under `accelerate launch`, and writes
pairs.csv, summary.md and, last, summary.json.
"""

from __future__ import annotations

import random
from dataclasses import fields
from pathlib import Path

from queerbias.models.loading import LoadedModel
from queerbias.pairs.schema import PairSet
from queerbias.scoring.config import ScoringConfig

CHUNK_PAIRS = 128  # pairs scored between two saves of progress


def sample_pairs(pair_set: PairSet, n: int | None, seed: int = 0) -> PairSet:
    """A seeded subset of n pairs in their original order (the whole set when n is None)."""
    if n is None or n >= len(pair_set):
        return pair_set
    chosen = sorted(random.Random(seed).sample(range(len(pair_set)), n))
    meta = {**pair_set.meta, "sample": {"n": n, "seed": seed, "of": len(pair_set)}}
    return PairSet(f"{pair_set.name}[sample {n}, seed {seed}]",
                   [pair_set.pairs[i] for i in chosen], pair_set.source, meta=meta)


def score_to_dir(
    model_spec: str | LoadedModel,
    pairs_spec: str | PairSet,
    out_dir: str | Path,
    config: ScoringConfig | None = None,
    *,
    batch_size: int | str = "auto",
    sample: int | None = None,
    seed: int = 0,
    overwrite: bool = False,
    progress: bool = True,
    chunk_pairs: int = CHUNK_PAIRS,
    extra_meta: dict | None = None,
    **load_options,
) -> dict:
    """Score and write the output contract; returns the summary (on every process)."""
    from queerbias.suites.pairs.suite import PairSettings, PairsSuite, data_of
    from queerbias.suites.store import run_to_dir

    scoring = (config or ScoringConfig()).to_dict()
    settings = PairSettings(sample=sample, seed=seed, batch_size=str(batch_size), chunk_pairs=chunk_pairs,
                            **{f.name: scoring[f.name] for f in fields(ScoringConfig)})
    suite = PairsSuite()
    data = data_of(pairs_spec, settings) if isinstance(pairs_spec, PairSet) else pairs_spec
    return run_to_dir(suite, model_spec, data, out_dir, settings, extra_meta=extra_meta, overwrite=overwrite,
                      progress=progress, **load_options)
