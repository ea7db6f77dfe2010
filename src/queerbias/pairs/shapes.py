"""Frame families filled with stereotype and neutral predicates: the data of the association measure.

A pair's d = s(sent_more) - s(sent_less) holds the identity phrase's own term (" Menschen" after
"nicht-binäre" against after "cis"), which is the same whatever the predicate. Filling one frame
with a group's stereotypes and with neutral predicates (everyday activities) lets the association
c = mean d(stereotypes) - mean d(neutral) cancel it (`suites.pairs.association`, issue 52).

Two families are built here, from queerbias-de's identities and predicates:

- `queerbias-de-shapes` (`data/shapes/shapes.yaml`), for judging: 80 frames in 16 construction
  shapes, each (group, frame) with `stereotypes` of the group's held-out predicates (queerbias-de:
  test's, which no training set holds) and `neutral` of the family's own neutral predicates. Its
  shapes are cut into `validation` and `test` by a committed seed, and the registry freezes each
  part's checksum (`frozen` in data/benchmarks.yaml).
- `queerbias-de-contrast` (training material for `objective: contrast`): the frames of
  queerbias-de-frames and every contrary candidate (`data/contrary_frames/frames.yaml`, judged
  often enough under issue 32 that it can no longer judge), each (group, frame) with every
  some of the group's training predicates and of the training neutral predicates (`contrast` and
  `neutral_predicates` of data/queerbias_de/training_frames.yaml; no neutral predicate is shared
  with the judged family), without the pairs that share a sentence with a shipped
  out-of-distribution set.

Everything is combined in file order with seeded draws only, so the same files always give the
same pairs, ids and checksums.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from queerbias.pairs.queerbias_de import (
    FRAMES,
    Identity,
    Predicate,
    fill_frame,
    frames_spec,
    held_out_templates,
    identities,
    load_templates,
    out_of_distribution_sentences,
    parse_predicate,
    predicates,
)
from queerbias.pairs.schema import NEUTRAL, STEREOTYPE, Pair, PairSet
from queerbias.yamlio import load_packaged_yaml

SHAPES = "data/shapes/shapes.yaml"
NAME = "queerbias-de-shapes"
PARTS = ("validation", "test")
CONTRAST = "queerbias-de-contrast"
CONTRARY_FRAMES = "data/contrary_frames/frames.yaml"


@dataclass(frozen=True)
class Frame:
    """One frame of a family: its id, text, and the keys its pairs carry (shape, part)."""

    id: str
    text: str
    keys: dict


def load_shapes() -> dict:
    """The family file, checked: frame ids unique, every frame a plural frame with one identity slot."""
    spec = load_packaged_yaml(SHAPES)
    ids = [frame["id"] for frames in spec["shapes"].values() for frame in frames]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{SHAPES}: frame ids repeat")
    for frames in spec["shapes"].values():
        for frame in frames:
            if (frame["text"].count("{who}") + frame["text"].count("{Who}")) != 1:
                raise ValueError(f"{SHAPES}: frame {frame['id']!r} needs exactly one {{who}} or {{Who}}")
    return spec


def shape_parts(spec: dict) -> dict[str, str]:
    """shape -> part: the shapes sorted by name, shuffled with the file's seed; the first half
    validation, the rest test. No score enters the draw."""
    shapes = sorted(spec["shapes"])
    random.Random(spec["seed"]).shuffle(shapes)
    half = len(shapes) // 2
    return {shape: PARTS[0] if index < half else PARTS[1] for index, shape in enumerate(shapes)}


def fill(frames: Sequence[Frame], people: Sequence[Identity], stereotypes: dict[str, list[tuple[Predicate, str]]],
         neutral: list[tuple[Predicate, str]], draws: tuple[int | None, int | None], prefix: str) -> list[tuple[Pair, dict]]:
    """Every pair of these frames, with its keys (frame, template, category, group, predicate_kind and the
    frame's own): per (frame, group), `draws[0]` of the group's stereotypes (`stereotypes[group]`) drawn
    with the frame's id and the group as seed, and `draws[1]` of the neutral predicates drawn with the
    frame's id as seed (the same for every group of the frame); None takes them all. Each predicate
    fills the frame with every plural phrase of the group against each of its counterfactuals. Ids
    look like `<prefix>-<frame id>-0042`."""
    built = []
    for frame in frames:
        shared = _draw(neutral, draws[1], f"{frame.id}/neutral")
        number = 0
        for person in people:
            chosen = [(STEREOTYPE, p, t) for p, t in _draw(stereotypes.get(person.group, []), draws[0],
                                                            f"{frame.id}/{person.group}")]
            for kind, predicate, template in chosen + [(NEUTRAL, p, t) for p, t in shared]:
                words = {"verb": predicate.verb, "rest": predicate.rest}
                for phrase, counterfactuals in person.plural.items():
                    more, end = fill_frame(frame.text, "who", phrase, words)
                    for counter_group, counterfactual in counterfactuals.items():
                        number += 1
                        pair = Pair(f"{prefix}-{frame.id}-{number:04d}", more,
                                    fill_frame(frame.text, "who", counterfactual, words)[0], person.group,
                                    counter_group, predicate.category, frame=frame.id, predicate_kind=kind,
                                    phrase_end=end)
                        built.append((pair, {**frame.keys, "frame": frame.id, "template": template,
                                             "category": predicate.category, "group": person.group,
                                             "predicate_kind": kind}))
    return built


def _draw(found: list, size: int | None, seed: str) -> list:
    """`size` of `found` drawn with `seed`, in their order (all of them for None)."""
    if size is None or size >= len(found):
        return list(found)
    chosen = set(random.Random(seed).sample(range(len(found)), size))
    return [item for index, item in enumerate(found) if index in chosen]


def _neutral(texts: list[str], where: str) -> list[tuple[Predicate, str]]:
    return [(parse_predicate(text, NEUTRAL, where), f"{NEUTRAL}/{index:02d}") for index, text in enumerate(texts)]


def _by_group(found: list[tuple[Predicate, str]], people: Sequence[Identity]) -> dict[str, list[tuple[Predicate, str]]]:
    return {person.group: [(p, t) for p, t in found if person.group in p.groups] for person in people}


@cache  # the registry asks for the set and then for its split keys: one build serves both
def _shapes_built() -> tuple[tuple[tuple[Pair, dict], ...], dict]:
    spec, templates = load_shapes(), load_templates()
    parts = shape_parts(spec)
    frames = [Frame(frame["id"], frame["text"], {"shape": shape, "part": parts[shape]})
              for shape, entries in spec["shapes"].items() for frame in entries]
    people = identities(templates)
    held_out = held_out_templates()
    stereotypes = _by_group([(p, t) for p, t in predicates(templates) if t in held_out], people)
    built = fill(frames, people, stereotypes, _neutral(spec["neutral_predicates"], SHAPES),
                 (spec["stereotypes"], spec["neutral"]), "qds")
    return tuple(built), spec


def build_shapes() -> PairSet:
    """queerbias-de-shapes: both parts (`:validation` and `:test` select one)."""
    built, spec = _shapes_built()
    return PairSet(name=NAME, pairs=[pair for pair, _ in built], source=f"queerbias:{SHAPES}",
                   meta={"family_version": spec["version"], "language": "de",
                         "parts": {part: sorted(s for s, p in shape_parts(spec).items() if p == part)
                                   for part in PARTS}})


def shapes_split_keys(pair_set: PairSet | None = None) -> dict[str, dict[str, str]]:
    """pair id -> frame, shape, part, template, category, group, predicate_kind (the set is always the same)."""
    return {pair.pair_id: keys for pair, keys in _shapes_built()[0]}


@cache  # as `_shapes_built`
def _contrast_built() -> tuple[tuple[tuple[Pair, dict], ...], int]:
    """The contrast training pairs and the version of the frames file: queerbias-de-frames' plural
    frames and every contrary candidate, with the training predicates and training neutral predicates."""
    training, version = frames_spec()
    candidates = load_packaged_yaml(CONTRARY_FRAMES)["frames"]
    frames = [Frame(f"frames-{index}", text, {"part": "train"}) for index, text in enumerate(training["plural_frames"])]
    frames += [Frame(f"contrary-{frame['id']}", frame["text"], {"part": "train"}) for frame in candidates]
    people = identities(training)
    held_out = held_out_templates()
    stereotypes = _by_group([(p, t) for p, t in predicates(training) if t not in held_out], people)
    spec = load_packaged_yaml(FRAMES)
    neutral = _neutral(spec["neutral_predicates"], FRAMES)
    built = fill(frames, people, stereotypes, neutral, (spec["contrast"]["stereotypes"], spec["contrast"]["neutral"]),
                 "qdk")
    held_out = out_of_distribution_sentences()
    return tuple((pair, keys) for pair, keys in built
                 if pair.sent_more not in held_out and pair.sent_less not in held_out), version


def build_contrast() -> PairSet:
    """queerbias-de-contrast: training pairs with stereotype and neutral predicates in every frame."""
    built, version = _contrast_built()
    return PairSet(name=CONTRAST, pairs=[pair for pair, _ in built], source=f"queerbias:{FRAMES}",
                   meta={"frames_version": version, "language": "de"})


def contrast_split_keys(pair_set: PairSet | None = None) -> dict[str, dict[str, str]]:
    """pair id -> frame, part (always `train`), template, category, group, predicate_kind."""
    return {pair.pair_id: keys for pair, keys in _contrast_built()[0]}
