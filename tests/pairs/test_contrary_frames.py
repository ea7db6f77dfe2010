"""queerbias-de-contrary: generated deterministically, frames unlike any other set's, declared
parts (validation, test) that split by frame, no train part, and sealed against training; the
candidates marked `train` are queerbias-de-frames-contrary, a training set apart, and those without
a part queerbias-de-unseen-frames, judged only."""

from __future__ import annotations

from collections import Counter

import pytest

from queerbias.errors import QueerbiasError
from queerbias.pairs.contrary_frames import (
    NAME,
    PARTS,
    TRAIN,
    TRAINING_NAME,
    UNSEEN_NAME,
    build_contrary_frames,
    build_contrary_training_frames,
    build_unseen_frames,
    contrary_split_keys,
    contrary_training_split_keys,
    generate,
    load_frames,
    unseen_split_keys,
)
from queerbias.pairs.queerbias_de import load_templates
from queerbias.pairs.resolve import declared_part, load_pairs, sealed_pairs
from queerbias.pairs.shipped import OUT_OF_DISTRIBUTION, shipped_pairs
from queerbias.pairs.splits import shared_sentences
from queerbias.yamlio import load_packaged_yaml


def test_generation_is_deterministic_and_draws_per_frame_and_group():
    spec = load_frames()
    first, second = build_contrary_frames(), build_contrary_frames()
    assert first.checksum == second.checksum and len(first) > 0
    keys = contrary_split_keys()
    chosen = [f for f in spec["frames"] if f.get("part") in PARTS]
    assert {keys[p.pair_id]["frame"] for p in first.pairs} == {f["id"] for f in chosen}
    templates = Counter((keys[p.pair_id]["frame"], p.group, keys[p.pair_id]["template"]) for p in first.pairs)
    per_group = Counter((frame, group) for frame, group, _ in templates)
    assert max(per_group.values()) == spec["predicates"]  # distinct predicates per frame and group
    # every pair names its frame in its id; the two sentences differ only in the identity phrase
    assert all(p.pair_id.startswith(f"qdc-{keys[p.pair_id]['frame']}-") for p in first.pairs)
    # a frame's draw does not depend on which other frames are chosen
    alone = generate([chosen[0]], spec["predicates"])
    assert {(p.sent_more, p.sent_less) for p, _ in alone} == {
        (p.sent_more, p.sent_less) for p in first.pairs if keys[p.pair_id]["frame"] == chosen[0]["id"]}


def test_frames_are_unlike_queerbias_de_its_training_frames_and_the_ood_sets():
    texts = {f["text"] for f in load_frames()["frames"]}
    training = load_packaged_yaml("data/queerbias_de/training_frames.yaml")
    assert not texts & set(load_templates()["plural_frames"]) and not texts & set(training["plural_frames"])
    sentences = {s for p in build_contrary_frames().pairs for s in (p.sent_more, p.sent_less)}
    others = [load_pairs("queerbias-de"), load_pairs("queerbias-de-frames"),
              *(shipped_pairs(name) for name in OUT_OF_DISTRIBUTION)]
    assert not any(sentences & {s for p in other.pairs for s in (p.sent_more, p.sent_less)} for other in others)


def test_declared_parts_split_by_frame_and_no_train_part():
    validation, test = load_pairs(f"{NAME}:validation"), load_pairs(f"{NAME}:test")
    keys = contrary_split_keys()
    frames = {part: {keys[p.pair_id]["frame"] for p in found.pairs} for part, found in
              (("validation", validation), ("test", test))}
    assert frames["validation"] and frames["test"] and not frames["validation"] & frames["test"]
    assert len(validation) + len(test) == len(build_contrary_frames())
    assert not shared_sentences(validation.pairs, test.pairs)
    assert test.meta["split"] == {"of": NAME, "of_checksum": build_contrary_frames().checksum, "part": "test",
                                  "by": ["part"], "declared": True,
                                  "n": {"validation": len(validation), "test": len(test)}, "shared_sentences": 0}
    with pytest.raises(QueerbiasError, match="declares no train part.*no run may train on it"):
        load_pairs(f"{NAME}:train")
    with pytest.raises(QueerbiasError, match="takes no options"):
        load_pairs(f"{NAME}:test?seed=1")
    with pytest.raises(QueerbiasError, match="declares no parts"):
        load_pairs("queerbias-de:validation")
    assert (declared_part(f"{NAME}:test"), declared_part(f"{NAME}:validation")) == ("test", "validation")
    assert declared_part("queerbias-de:test") is None and declared_part(NAME) is None


def test_sealed_pairs_are_both_judging_parts_and_the_unseen_frames():
    sealed = sealed_pairs()
    assert list(sealed) == [NAME, UNSEEN_NAME] and len(sealed[NAME]) == len(build_contrary_frames())
    assert len(sealed[UNSEEN_NAME]) == len(build_unseen_frames())


def test_the_unseen_frames_are_every_candidate_no_part_chose_filled_as_the_chosen_are():
    frames = load_frames()["frames"]
    unseen, keys = build_unseen_frames(), unseen_split_keys()
    spare = [f for f in frames if not f.get("part")]
    assert len(spare) == 16 and {keys[p.pair_id]["frame"] for p in unseen.pairs} == {f["id"] for f in spare}
    assert {keys[p.pair_id]["part"] for p in unseen.pairs} == {"test"}
    # the same draw a chosen frame would get: generate() seeds by the frame's id alone
    alone = generate([spare[0]], load_frames()["predicates"])
    assert [p.sent_more for p, _ in alone] == [p.sent_more for p in unseen.pairs
                                               if keys[p.pair_id]["frame"] == spare[0]["id"]]
    assert len(load_pairs(f"{UNSEEN_NAME}:test")) == len(unseen) and declared_part(f"{UNSEEN_NAME}:test") == "test"
    with pytest.raises(QueerbiasError, match="declares no train part"):
        load_pairs(f"{UNSEEN_NAME}:train")
    for other in (build_contrary_frames(), build_contrary_training_frames()):
        assert not shared_sentences(unseen.pairs, other.pairs)


def test_the_train_candidates_are_a_training_set_apart_with_training_predicates_only():
    """queerbias-de-frames-contrary: the `train` frames (none in a judged frame's shape: reading a claim, a
    focus particle before the group),
    filled with queerbias-de-frames' phrases; its :train shares no predicate with queerbias-de:test and no
    sentence with queerbias-de-contrary, and queerbias-de-contrary itself is unchanged by them."""
    frames = load_frames()["frames"]
    judged = [f["text"] for f in frames if f.get("part") in PARTS]
    marked = [f["text"] for f in frames if f.get("part") == TRAIN]
    shapes = ("liest man", "gelesen", "Gerade {who}", "Auch {who}", "Sogar {who}", "Vor allem {who}")
    assert len(marked) == 71 and all(any(shape in text for shape in shapes) for text in judged)
    assert not any(shape in text for shape in shapes for text in marked)
    training = build_contrary_training_frames()
    assert training.name == TRAINING_NAME and all(p.pair_id.startswith("qdx-") for p in training.pairs)
    keys = contrary_training_split_keys()
    train, test = load_pairs(f"{TRAINING_NAME}:train"), load_pairs("queerbias-de:test")
    assert train.meta["split"]["values"] == load_pairs("queerbias-de:train").meta["split"]["values"]
    assert not {keys[p.pair_id]["template"] for p in train.pairs} & set(test.meta["split"]["values"])
    assert not shared_sentences(train.pairs, test.pairs)
    assert not shared_sentences(training.pairs, build_contrary_frames().pairs)
    assert {keys[p.pair_id]["frame"] for p in training.pairs} == {f"plural/{i}" for i in range(len(marked))}
