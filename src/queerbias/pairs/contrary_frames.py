"""queerbias-de-frames-contrary: training pairs in the contrary candidate frames (issue 32).

The candidates in `data/contrary_frames/frames.yaml` were written to find frames in which the
base model prefers the counterfactual sentence. Until version 2 of that file six of them judged
mitigations (`queerbias-de-contrary`) and 16 more were held out (`queerbias-de-unseen-frames`);
about 30 recipes were judged on them, so since version 3 every candidate is a training frame and
a mitigation is judged on `queerbias-de-shapes` instead (issue 52, `pairs.shapes`). This module
fills them as queerbias-de-frames fills its own frames (its phrases, every predicate; split by
template, so `:train` keeps queerbias-de:train's predicates), without randomness.
"""

from __future__ import annotations

from functools import cache

from queerbias.pairs.queerbias_de import build_training_pairs, frames_spec, pair_keys
from queerbias.pairs.schema import PairSet
from queerbias.yamlio import load_packaged_yaml

FRAMES = "data/contrary_frames/frames.yaml"
TRAINING_NAME = "queerbias-de-frames-contrary"


def load_frames() -> dict:
    """The frames file: its version and every candidate frame (id, text, part, base), ids unique."""
    spec = load_packaged_yaml(FRAMES)
    ids = [frame["id"] for frame in spec["frames"]]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{FRAMES}: frame ids repeat")
    for frame in spec["frames"]:
        if frame.get("part") != "train":
            raise ValueError(f"{FRAMES}: frame {frame['id']!r} has part {frame.get('part')!r}; every candidate "
                             "is a training frame since version 3")
    return spec


@cache  # the registry asks for the set and then for its split keys: one build serves both
def _training_built():
    """The frames filled as queerbias-de-frames fills its own frames, and the frames file's version."""
    spec = load_frames()
    training, _ = frames_spec()
    built, _ = build_training_pairs({**training, "plural_frames": [frame["text"] for frame in spec["frames"]],
                                     "name_frames": []}, "qdx")
    return built, spec["version"]


def build_contrary_training_frames() -> PairSet:
    """queerbias-de-frames-contrary: training pairs in every candidate frame (ids look like `qdx-phase-0042`)."""
    built, version = _training_built()
    return PairSet(name=TRAINING_NAME, pairs=[pair for pair, _ in built], source=f"queerbias:{FRAMES}",
                   meta={"frames_version": version, "language": "de"})


def contrary_training_split_keys(pair_set: PairSet | None = None) -> dict[str, dict[str, str]]:
    """The split keys of queerbias-de-frames-contrary (template ids are queerbias-de's)."""
    return pair_keys(_training_built()[0])
