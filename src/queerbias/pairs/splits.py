"""Held-out splits of pair sets: seeded, recorded, by a key column, never by pair.

A mitigation trained on pairs must be judged on pairs it never saw. Splitting by pair
would put the same stereotype (and often the same sentence) on both sides, so a split
assigns whole values of a key column to one side: queerbias-de by `template` (the
stereotype predicate) or `frame` (the sentence frame), any pair file by one of its
columns. With several columns (`by=frame+template`) a pair belongs to a side only when
every one of its values does; the mixed pairs are dropped (the strictest held-out set:
other frames and other stereotypes).

Spec: `SOURCE:train` / `SOURCE:test`, optionally `?by=COLUMN[+COLUMN]&test=0.3&seed=0`,
where SOURCE is a registered pair set or a file (`queerbias-de:test`,
`my_pairs.csv:train?by=template`). The split (columns, seed, fraction, the values on
each side, the parent's checksum and the sentences the two sides share) is recorded in
`PairSet.meta["split"]`, so every score file names exactly what it was computed on.

A registered set may instead declare each pair's part in a column (`parts` in
benchmarks.yaml: queerbias-de-shapes' frames are `validation` or `test`). Then
`SOURCE:validation` and `SOURCE:test` take the declared part, no options are accepted, and
there is no `:train` unless a pair declares it: a part made for judging stays out of training.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass

from queerbias.errors import QueerbiasError
from queerbias.options import MAX_SEED, integer, number
from queerbias.pairs.schema import PairSet

PARTS = ("train", "test")
#: the parts a set may declare per pair (`take_declared_part`)
DECLARED_PARTS = ("train", "validation", "test")
DEFAULT_TEST_FRACTION = 0.3
_SPEC = re.compile(r"^(?P<source>.+):(?P<part>train|validation|test)(?:\?(?P<query>.*))?$")


@dataclass(frozen=True)
class SplitSpec:
    source: str
    part: str
    by: tuple[str, ...] | None = None  # None: the source's default column
    test_fraction: float = DEFAULT_TEST_FRACTION
    seed: int = 0
    options: bool = False  # the spec gave options after "?"


def split_source(spec: str) -> str | None:
    """The source a split spec cuts (`X/pairs.csv:test?by=group` -> `X/pairs.csv`), None for
    anything else; unchecked, so that the output guard sees the file even of a bad spec."""
    match = _SPEC.match(spec)
    return match["source"] if match else None


def parse_split(spec: str) -> SplitSpec | None:
    """The split a pair spec asks for, or None for a plain name or file."""
    match = _SPEC.match(spec)
    if not match:
        return None
    options = dict(item.partition("=")[::2] for item in (match["query"] or "").split("&") if item)
    unknown = sorted(set(options) - {"by", "test", "seed"})
    if unknown:
        raise QueerbiasError(f"pair split {spec!r}: unknown option {unknown[0]!r}; "
                             "known: by, test, seed")
    try:
        fraction = number(options.get("test", str(DEFAULT_TEST_FRACTION)))
        seed = integer(options.get("seed", "0"))
    except ValueError:
        raise QueerbiasError(f"pair split {spec!r}: test must be a number and seed an "
                             "integer") from None
    if not 0 <= seed <= MAX_SEED:
        raise QueerbiasError(f"pair split {spec!r}: seed must be between 0 and {MAX_SEED:,}, got {seed}")
    if not 0 < fraction < 1:
        raise QueerbiasError(f"pair split {spec!r}: test must be between 0 and 1, got {fraction}")
    by = tuple(c for c in options["by"].split("+") if c) if "by" in options else None
    if by is not None and not by:
        raise QueerbiasError(f"pair split {spec!r}: by names no column")
    return SplitSpec(match["source"], match["part"], by, fraction, seed, bool(options))


def assign_values(values: list[str], test_fraction: float, seed: int) -> dict[str, str]:
    """value -> 'train' or 'test': a seeded shuffle of the sorted distinct values, the first
    round(fraction * n) of them (at least one, never all) held out."""
    distinct = sorted(set(values))
    if len(distinct) < 2:
        raise QueerbiasError(f"a split needs at least two distinct values, got {distinct}")
    random.Random(seed).shuffle(distinct)
    n_test = min(len(distinct) - 1, max(1, round(test_fraction * len(distinct))))
    return {value: ("test" if i < n_test else "train") for i, value in enumerate(distinct)}


def split_pairs(pair_set: PairSet, keys: Mapping[str, Mapping[str, str]], spec: SplitSpec,
                by: tuple[str, ...], name: str) -> PairSet:
    """The requested side of `pair_set`; `keys` gives each pair id's column values."""
    missing = [c for c in by if any(c not in keys[p.pair_id] for p in pair_set.pairs)]
    if missing:
        known = sorted(next(iter(keys.values()), {}))
        raise QueerbiasError(f"pair split {name!r}: {pair_set.name} has no column {missing[0]!r} "
                             f"to split by; columns: {', '.join(known)}")
    sides = {column: assign_values([keys[p.pair_id][column] for p in pair_set.pairs],
                                    spec.test_fraction, spec.seed + index)
             for index, column in enumerate(by)}

    def side(pair) -> str | None:
        found = {sides[c][keys[pair.pair_id][c]] for c in by}
        return found.pop() if len(found) == 1 else None

    parts = {part: [p for p in pair_set.pairs if side(p) == part] for part in PARTS}
    record = {
        "of": pair_set.name,
        "of_checksum": pair_set.checksum,
        "part": spec.part,
        "by": list(by),
        "test_fraction": spec.test_fraction,
        "seed": spec.seed,
        "values": {c: {part: sorted(v for v, s in sides[c].items() if s == part) for part in PARTS}
                   for c in by},
        "n": {part: len(pairs) for part, pairs in parts.items()},
        "dropped_mixed": len(pair_set) - sum(len(p) for p in parts.values()),
        "shared_sentences": len(shared_sentences(parts["train"], parts["test"])),
    }
    return PairSet(name, parts[spec.part], pair_set.source, meta={**pair_set.meta, "split": record})


def take_declared_part(pair_set: PairSet, keys: Mapping[str, Mapping[str, str]], column: str, spec: SplitSpec,
                  name: str) -> PairSet:
    """The pairs whose `column` declares `spec.part` (a set whose parts are fixed, not drawn)."""
    if spec.options:
        raise QueerbiasError(f"pair split {name!r}: {pair_set.name} declares its parts ({column} column); "
                             f"a split of it takes no options (use {spec.source}:{spec.part})")
    parts = {part: [p for p in pair_set.pairs if keys[p.pair_id][column] == part] for part in DECLARED_PARTS}
    if not parts[spec.part]:
        declared = [part for part in DECLARED_PARTS if parts[part]]
        raise QueerbiasError(f"pair split {name!r}: {pair_set.name} declares no {spec.part} part (its parts: "
                             f"{', '.join(declared)})" + ("; no run may train on it" if spec.part == "train" else ""))
    record = {"of": pair_set.name, "of_checksum": pair_set.checksum, "part": spec.part, "by": [column],
              "declared": True, "n": {part: len(found) for part, found in parts.items() if found},
              "shared_sentences": len(shared_sentences(parts[spec.part], [p for part, found in parts.items()
                                                                          if part != spec.part for p in found]))}
    return PairSet(name, parts[spec.part], pair_set.source, meta={**pair_set.meta, "split": record})


def shared_sentences(first, second) -> set[str]:
    """Sentences (either side of a pair) that occur in both lists of pairs."""
    def sentences(pairs):
        return {s for p in pairs for s in (p.sent_more, p.sent_less)}

    return sentences(first) & sentences(second)
