"""queerbias-de-shapes (judging) and queerbias-de-contrast (training): generated deterministically from
their files; the judged family has 16 shapes of 5 frames, parts drawn by shape with the committed seed,
every (group, frame) with held-out stereotypes and neutral predicates, no sentence shared with any
other set, sealed against training and frozen by checksum (issue 52)."""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import replace

import pytest

from queerbias.errors import QueerbiasError
from queerbias.pairs.queerbias_de import held_out_templates, split_keys
from queerbias.pairs.registry import check_frozen, get_benchmark
from queerbias.pairs.resolve import declared_part, load_pairs, sealed_pairs
from queerbias.pairs.schema import NEUTRAL, STEREOTYPE, PairSet
from queerbias.pairs.shapes import (
    CONTRAST,
    NAME,
    PARTS,
    build_contrast,
    build_shapes,
    contrast_split_keys,
    load_shapes,
    shape_parts,
    shapes_split_keys,
)
from queerbias.pairs.shipped import OUT_OF_DISTRIBUTION, shipped_pairs
from queerbias.pairs.splits import shared_sentences
from queerbias.yamlio import load_packaged_yaml


def test_sixteen_shapes_of_five_frames_cut_into_parts_by_the_committed_seed_alone():
    spec = load_shapes()
    assert len(spec["shapes"]) == 16 and all(len(frames) >= 4 for frames in spec["shapes"].values())
    shapes = sorted(spec["shapes"])
    random.Random(spec["seed"]).shuffle(shapes)  # what the file's header promises, recomputed here
    assert shape_parts(spec) == {shape: "validation" if i < 8 else "test" for i, shape in enumerate(shapes)}
    keys = shapes_split_keys()
    assert {keys[p.pair_id]["part"] for p in build_shapes().pairs} == set(PARTS)


@pytest.mark.parametrize("part", PARTS)
def test_every_group_has_36_frames_and_every_frame_four_stereotypes_and_two_neutral_predicates(part):
    pairs = load_pairs(f"{NAME}:{part}")
    keys = shapes_split_keys()
    predicates = defaultdict(set)
    for pair in pairs.pairs:
        assert keys[pair.pair_id]["part"] == part and pair.frame == keys[pair.pair_id]["frame"]
        predicates[pair.group, pair.frame, pair.predicate_kind].add(keys[pair.pair_id]["template"])
    frames = defaultdict(set)
    for group, frame, kind in predicates:
        frames[group].add(frame)
        assert len(predicates[group, frame, STEREOTYPE]) == 4 and len(predicates[group, frame, NEUTRAL]) == 2
    assert len(frames) == 16 and min(len(found) for found in frames.values()) >= 36
    # the neutral predicates of a frame are the same for every group
    by_frame = defaultdict(set)
    for (group, frame, kind), found in predicates.items():
        if kind == NEUTRAL:
            by_frame[frame].add(frozenset(found))
    assert all(len(found) == 1 for found in by_frame.values())


def test_stereotypes_are_the_held_out_predicates_of_queerbias_de_test():
    keys = split_keys()
    test_templates = {keys[p.pair_id]["template"] for p in load_pairs("queerbias-de:test").pairs}
    assert held_out_templates() == test_templates
    keys = shapes_split_keys()
    assert {keys[p.pair_id]["template"] for p in build_shapes().pairs if p.predicate_kind == STEREOTYPE} \
        <= test_templates


def test_the_identity_phrase_ends_where_the_pair_says():
    for pair in build_shapes().pairs[::97]:
        head, tail = pair.sent_more[:pair.phrase_end], pair.sent_more[pair.phrase_end:]
        assert pair.sent_less.endswith(tail) and not pair.sent_less.startswith(head)
        assert head[-1].isalpha() and (not tail or not tail[0].isalpha())


def test_no_sentence_is_shared_with_any_other_set_and_both_parts_are_sealed():
    judged = build_shapes().pairs
    others = [load_pairs("queerbias-de"), load_pairs("queerbias-de-frames"), load_pairs("queerbias-de-frames-contrary"),
              build_contrast(), *(shipped_pairs(name) for name in OUT_OF_DISTRIBUTION)]
    for other in others:
        assert not shared_sentences(judged, other.pairs), other.name
    texts = {frame["text"] for frames in load_shapes()["shapes"].values() for frame in frames}
    training = load_packaged_yaml("data/queerbias_de/training_frames.yaml")["plural_frames"]
    contrary = [frame["text"] for frame in load_packaged_yaml("data/contrary_frames/frames.yaml")["frames"]]
    assert not texts & {*training, *contrary}
    assert len(sealed_pairs()[NAME]) == len(judged)
    assert declared_part(f"{NAME}:test") == "test"
    with pytest.raises(QueerbiasError, match="declares no train part"):
        load_pairs(f"{NAME}:train")


def test_a_part_whose_pairs_differ_from_the_frozen_checksum_is_refused():
    info = get_benchmark(NAME)
    assert set(info.frozen) == set(PARTS)
    test = load_pairs(f"{NAME}:test")  # passes: the committed family is the frozen one
    check_frozen(info, "test", test)
    changed = PairSet(test.name, [replace(test.pairs[0], sent_less=test.pairs[0].sent_less + " ")] + test.pairs[1:],
                      test.source)
    with pytest.raises(QueerbiasError, match="queerbias-de-shapes:test has checksum .* frozen with"):
        check_frozen(info, "test", changed)
    with pytest.raises(QueerbiasError, match="frozen with"):
        check_frozen(replace(info, frozen={"validation": "sha256:0"}), "validation",
                     load_pairs(f"{NAME}:validation"))


def test_the_contrast_training_set_fills_training_frames_with_training_and_neutral_predicates():
    pairs, keys = build_contrast(), contrast_split_keys()
    assert pairs.checksum == build_contrast().checksum and CONTRAST not in sealed_pairs()
    assert len(load_pairs(f"{CONTRAST}:train")) == len(pairs)
    templates = Counter(keys[p.pair_id]["template"] for p in pairs.pairs if p.predicate_kind == STEREOTYPE)
    assert not set(templates) & held_out_templates()
    judged = {p.sent_more.split(",")[-1] for p in build_shapes().pairs if p.predicate_kind == NEUTRAL}
    spec = load_packaged_yaml("data/queerbias_de/training_frames.yaml")
    own = {text.replace(" |", "") for text in spec["neutral_predicates"]}
    assert not {text.replace(" |", "") for text in load_shapes()["neutral_predicates"]} & own
    assert judged  # the judged family's neutral sentences exist, and none is a training sentence
    kinds = defaultdict(set)
    for pair in pairs.pairs:
        kinds[pair.group, pair.frame].add(pair.predicate_kind)
    assert all(found == {STEREOTYPE, NEUTRAL} for found in kinds.values())
