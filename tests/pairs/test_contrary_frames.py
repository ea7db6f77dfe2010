"""queerbias-de-frames-contrary: every contrary candidate frame is a training frame since version 3 of
frames.yaml, and the sets that once judged on them are retired with a message saying what to use."""

from __future__ import annotations

import pytest

from queerbias.errors import QueerbiasError
from queerbias.pairs.contrary_frames import (
    TRAINING_NAME,
    build_contrary_training_frames,
    contrary_training_split_keys,
    load_frames,
)
from queerbias.pairs.queerbias_de import held_out_templates
from queerbias.pairs.resolve import load_pairs, sealed_pairs
from queerbias.pairs.shipped import OUT_OF_DISTRIBUTION, shipped_pairs
from queerbias.pairs.splits import shared_sentences


def test_every_candidate_is_a_training_frame_filled_with_training_predicates_only():
    spec = load_frames()
    assert spec["version"] == 3 and {frame["part"] for frame in spec["frames"]} == {"train"}
    training = load_pairs(f"{TRAINING_NAME}:train")
    keys = contrary_training_split_keys()
    assert not {keys[p.pair_id]["template"] for p in training.pairs} & held_out_templates()
    assert TRAINING_NAME not in sealed_pairs()
    assert build_contrary_training_frames().checksum == build_contrary_training_frames().checksum


def test_no_training_pair_shares_a_sentence_with_an_out_of_distribution_set():
    training = build_contrary_training_frames().pairs
    for name in OUT_OF_DISTRIBUTION:
        assert not shared_sentences(training, shipped_pairs(name).pairs), name


@pytest.mark.parametrize("name", ["queerbias-de-contrary", "queerbias-de-unseen-frames"])
def test_the_retired_sets_say_why_and_what_to_judge_on(name):
    for spec in (name, f"{name}:validation", f"{name}:test"):
        with pytest.raises(QueerbiasError, match=f"benchmark '{name}' was retired: .*queerbias-de-shapes"):
            load_pairs(spec)
