"""queerbias-de-contrary: frames in which the base model prefers the counterfactual sentence.

A mitigation that shifts how likely a stereotype is after an identity phrase can look
harmless on its own benchmarks and still push whole groups across 50 into the stereotype
on a frame where the base preferred the counterfactual (issue 32). This set holds such
frames, found by scoring the embedded Gemma 3 270M base on candidates we wrote
(`bench/contrary_frames.py`), filled with queerbias-de's identities and stereotype
predicates: per frame and group a fixed draw of the group's predicates (seeded by the
frame's id), every counterfactual of the group's plural phrase. All content is in
`data/contrary_frames/frames.yaml`; this module only combines it, without randomness
beyond those fixed draws, so the same file always gives the same pairs, ids and checksum.

Each chosen frame declares its part: `queerbias-de-contrary:validation` (checkpoint
selection, a study's verdict) and `queerbias-de-contrary:test` (the final judgement,
which nothing selects on); `pairs.splits` reads the declared part, never a seeded draw.

The candidates that no part chose and no run trains on are `queerbias-de-unseen-frames`, filled
the same way, every pair in its declared `test` part: 16 more frames no run saw, whatever the
base prefers there. Why: the three test frames were chosen as the base's most contrary, so they
judge a recipe on one sentence shape and a few groups; on the other candidates a recipe that
moved no group above 60 on the test frames moved trans women from 51 to 80 (issue 32).
"""

from __future__ import annotations

import random
from collections import defaultdict
from functools import cache

from queerbias.pairs.queerbias_de import (
    build_pairs,
    build_training_pairs,
    frames_spec,
    load_templates,
    pair_keys,
)
from queerbias.pairs.schema import Pair, PairSet
from queerbias.yamlio import load_packaged_yaml

FRAMES = "data/contrary_frames/frames.yaml"
NAME = "queerbias-de-contrary"
PARTS = ("validation", "test")
UNSEEN_NAME = "queerbias-de-unseen-frames"  # the candidates without a part, all judged (`test`)
TRAIN = "train"  # candidates given to training (`queerbias-de-frames-contrary`), never in NAME
TRAINING_NAME = "queerbias-de-frames-contrary"


def load_frames() -> dict:
    """The frames file: its version, draw sizes and every candidate frame (id, text, part, base)."""
    spec = load_packaged_yaml(FRAMES)
    ids = [frame["id"] for frame in spec["frames"]]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{FRAMES}: frame ids repeat")
    for frame in spec["frames"]:
        if frame.get("part") not in (None, *PARTS, TRAIN):
            raise ValueError(f"{FRAMES}: frame {frame['id']!r} has part {frame['part']!r}; "
                             f"expected one of {(*PARTS, TRAIN)}")
    return spec


def generate(frames: list[dict], per_group: int) -> list[tuple[Pair, dict]]:
    """Every pair of these frames, with its keys (frame id, part, template, category, group): per
    frame and group, `per_group` of the group's queerbias-de predicates drawn with the frame's id
    as seed. Ids look like `qdc-<frame id>-0042`."""
    spec = load_templates()
    filled = build_pairs({**spec, "plural_frames": [frame["text"] for frame in frames], "name_frames": []}, "qdc")
    templates: dict[tuple[int, str], list[str]] = defaultdict(list)
    for _, item in filled:
        index = int(item.keys["frame"].split("/")[1])
        if item.keys["template"] not in templates[index, item.group]:
            templates[index, item.group].append(item.keys["template"])
    chosen = {key: set(random.Random(f"{frames[key[0]]['id']}/{key[1]}").sample(found, min(per_group, len(found))))
              for key, found in templates.items()}
    counters: dict[str, int] = defaultdict(int)
    built = []
    for pair, item in filled:
        index = int(item.keys["frame"].split("/")[1])
        if item.keys["template"] not in chosen[index, item.group]:
            continue
        frame = frames[index]
        counters[frame["id"]] += 1
        renamed = Pair(f"qdc-{frame['id']}-{counters[frame['id']]:04d}", pair.sent_more, pair.sent_less, pair.group,
                       pair.counterfactual_group, pair.category)
        built.append((renamed, {"frame": frame["id"], "part": frame.get("part") or "", "template": item.keys["template"],
                                "category": pair.category, "group": pair.group}))
    return built


@cache  # the registry asks for the set and then for its split keys: one build serves both
def _built() -> tuple[list[tuple[Pair, dict]], dict]:
    spec = load_frames()
    return generate([frame for frame in spec["frames"] if frame.get("part") in PARTS], spec["predicates"]), spec


@cache  # as `_built`
def _unseen_built() -> list[tuple[Pair, dict]]:
    """The candidates without a part, each filled as a chosen frame is, declared `test`."""
    spec = load_frames()
    return generate([{**frame, "part": "test"} for frame in spec["frames"] if not frame.get("part")],
                    spec["predicates"])


def build_contrary_frames() -> PairSet:
    """queerbias-de-contrary: the chosen frames' pairs, both parts (`:validation` and `:test` select one)."""
    built, spec = _built()
    return PairSet(name=NAME, pairs=[pair for pair, _ in built], source=f"queerbias:{FRAMES}",
                   meta={"frames_version": spec["version"], "language": "de",
                         "parts": {part: sorted(f["id"] for f in spec["frames"] if f.get("part") == part)
                                   for part in PARTS}})


def contrary_split_keys(pair_set: PairSet | None = None) -> dict[str, dict[str, str]]:
    """pair id -> frame, part, template, category, group (the generated set is always the same)."""
    return {pair.pair_id: keys for pair, keys in _built()[0]}


def build_unseen_frames() -> PairSet:
    """queerbias-de-unseen-frames: every candidate frame no part chose and no run trains on (ids
    look like `qdc-twitter-0042`); `:test` is the whole set, judged on and never selected on."""
    spec = load_frames()
    return PairSet(name=UNSEEN_NAME, pairs=[pair for pair, _ in _unseen_built()], source=f"queerbias:{FRAMES}",
                   meta={"frames_version": spec["version"], "language": "de"})


def unseen_split_keys(pair_set: PairSet | None = None) -> dict[str, dict[str, str]]:
    """pair id -> frame, part (always `test`), template, category, group."""
    return {pair.pair_id: keys for pair, keys in _unseen_built()}


@cache  # as `_built`
def _training_built():
    """The `train` frames filled as queerbias-de-frames fills its own frames (its phrases, every
    predicate; split by template, `:train` keeps queerbias-de:train's predicates), and the
    frames file's version."""
    spec = load_frames()
    texts = [frame["text"] for frame in spec["frames"] if frame.get("part") == TRAIN]
    training, _ = frames_spec()
    built, _ = build_training_pairs({**training, "plural_frames": texts, "name_frames": []}, "qdx")
    return built, spec["version"]


def build_contrary_training_frames() -> PairSet:
    """queerbias-de-frames-contrary: training pairs in the candidate frames marked `train` (ids look
    like `qdx-phase-0042`)."""
    built, version = _training_built()
    return PairSet(name=TRAINING_NAME, pairs=[pair for pair, _ in built], source=f"queerbias:{FRAMES}",
                   meta={"frames_version": version, "language": "de"})


def contrary_training_split_keys(pair_set: PairSet | None = None) -> dict[str, dict[str, str]]:
    """The split keys of queerbias-de-frames-contrary (template ids are queerbias-de's)."""
    return pair_keys(_training_built()[0])
