"""Pair specs -> pair sets: a registered name, a file, or one side of a held-out split of either.

Sits above the pure modules it combines (`io` reads files, `registry` names and fetches
benchmarks, `splits` cuts a set in two), so none of them imports another to resolve a spec.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from queerbias.errors import QueerbiasError
from queerbias.pairs.io import read_pairs, row_columns
from queerbias.pairs.registry import (
    check_frozen,
    get_benchmark,
    is_registered,
    list_benchmarks,
    resolve_pairs,
)
from queerbias.pairs.sampling import sample_pairs
from queerbias.pairs.schema import PairSet
from queerbias.pairs.splits import PARTS, SplitSpec, parse_split, split_pairs, take_declared_part


def load_pairs(spec: str | Path, duplicates: str = "error", identical: str = "error",
               layout: str = "auto", sample: int | None = None, seed: int = 0) -> PairSet:
    """A registered benchmark name (downloaded/generated as needed), a file path, or one
    side of a held-out split of either (`queerbias-de:test`, see `pairs.splits`); with
    `sample`, the seeded subset of n pairs (`pairs.sampling`: a file is sampled as it is read)."""
    if not str(spec).strip():
        raise QueerbiasError("the pair spec is empty; give a registered benchmark name (queerbias benchmarks) "
                             "or a pair file")
    split = None if Path(str(spec)).is_file() else parse_split(str(spec))
    if split is not None:
        return sample_pairs(load_split(split, str(spec), duplicates=duplicates, identical=identical, layout=layout),
                            sample, seed)
    resolved = resolve_pairs(str(spec))
    if isinstance(resolved, PairSet):
        return _with_language(sample_pairs(resolved, sample, seed), str(spec))
    name = str(spec) if not Path(str(spec)).exists() else None
    return _with_language(read_pairs(resolved, name=name, duplicates=duplicates, identical=identical, layout=layout,
                                     sample=sample, seed=seed), str(spec))


def _with_language(pair_set: PairSet, source: str) -> PairSet:
    """A registered set carries the language its registry entry declares (`meta.language`: the
    language a model with language embeddings is given), unless its rows name several."""
    if is_registered(source) and "language" not in pair_set.meta and len(pair_set.meta.get("languages", {})) < 2:
        pair_set.meta["language"] = get_benchmark(source).language
    return pair_set


def load_split(spec: SplitSpec, name: str, duplicates: str = "error", identical: str = "error",
               layout: str = "auto") -> PairSet:
    """Resolve the source (registered set or file), then take the requested side."""
    resolved = resolve_pairs(spec.source)
    info = get_benchmark(spec.source) if is_registered(spec.source) else None
    derived = None
    if info and info.split_keys:  # a registered set's own key columns (queerbias-de: frame, template)
        module, _, function = info.split_keys.partition(":")
        derived = getattr(importlib.import_module(module), function)
    if isinstance(resolved, PairSet):
        if derived is None:
            raise QueerbiasError(f"pair split {name!r}: {spec.source} declares no split keys")
        pair_set = _with_language(resolved, spec.source)
        keys = derived(pair_set)
    else:
        pair_set = _with_language(read_pairs(resolved, name=spec.source, duplicates=duplicates, identical=identical,
                                             layout=layout), spec.source)
        columns = row_columns(resolved)
        extra = derived(pair_set) if derived else {}
        keys = {p.pair_id: {**columns[p.source_row], "group": p.group, "category": p.category,
                            **extra.get(p.pair_id, {})} for p in pair_set.pairs}
    if info and info.parts:
        part = take_declared_part(pair_set, keys, info.parts, spec, name)
        check_frozen(info, spec.part, part)
        return part
    if spec.part not in PARTS:
        raise QueerbiasError(f"pair split {name!r}: {spec.source} declares no parts, so it splits into "
                             f"{' and '.join(PARTS)} only")
    by = spec.by or ((info.split_by,) if info and info.split_by else None)
    if by is None:
        raise QueerbiasError(f"pair split {name!r}: name the column to split by, e.g. "
                             f"{spec.source}:{spec.part}?by=template")
    return split_pairs(pair_set, keys, spec, by, name)


def declared_part(spec) -> str | None:
    """The part a pair spec takes of a set that declares its parts (`queerbias-de-shapes:test` ->
    "test"), None for any other spec: a test part is judged on, never trained or selected on."""
    split = parse_split(str(spec)) if spec else None
    if split is None or not is_registered(split.source) or not get_benchmark(split.source).parts:
        return None
    return split.part


def sealed_pairs() -> dict[str, PairSet]:
    """Per registered set that declares its parts (`parts` in benchmarks.yaml), its pairs in every
    declared part but train: data made for judging, which no run may train on whether or not it
    evaluates it (the overlap guard, `train.overlap`)."""
    sealed = {}
    for info in list_benchmarks():
        if not info.parts:
            continue
        pair_set = resolve_pairs(info.name)
        module, _, function = info.split_keys.partition(":")
        keys = getattr(importlib.import_module(module), function)(pair_set)
        judged = [p for p in pair_set.pairs if keys[p.pair_id][info.parts] != "train"]
        if judged:  # a set whose pairs are all `train` (queerbias-de-contrast) seals nothing
            sealed[info.name] = PairSet(info.name, judged, pair_set.source)
    return sealed
