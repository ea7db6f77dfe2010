"""Held-out splits: deterministic, disjoint in sentences, recorded; any pair file by a column."""

from __future__ import annotations

import pytest

from queerbias.errors import QueerbiasError
from queerbias.pairs.resolve import load_pairs
from queerbias.pairs.splits import assign_values, parse_split, shared_sentences


def sentences(pair_set) -> set[str]:
    return {s for p in pair_set.pairs for s in (p.sent_more, p.sent_less)}


@pytest.mark.parametrize("by", ["template", "frame", "frame+template"])
def test_queerbias_de_split_is_deterministic_and_shares_no_sentence(by):
    suffix = "" if by == "template" else f"?by={by}"
    train = load_pairs(f"queerbias-de:train{suffix}")
    test = load_pairs(f"queerbias-de:test{suffix}")
    again = load_pairs(f"queerbias-de:test{suffix}")
    assert again.pairs == test.pairs and again.checksum == test.checksum
    assert train.pairs and test.pairs
    assert not sentences(train) & sentences(test)
    assert not {p.pair_id for p in train.pairs} & {p.pair_id for p in test.pairs}
    record = test.meta["split"]
    assert record["by"] == by.split("+") and record["shared_sentences"] == 0
    assert record["n"] == {"train": len(train), "test": len(test)}
    full = load_pairs("queerbias-de")
    assert record["of_checksum"] == full.checksum
    if by != "frame+template":  # a single column puts every pair on one side
        assert len(train) + len(test) == len(full)


def test_template_split_holds_out_whole_predicates_in_every_group():
    test = load_pairs("queerbias-de:test")
    values = test.meta["split"]["values"]["template"]
    assert set(values["train"]).isdisjoint(values["test"])
    assert len(values["test"]) == round(0.3 * (len(values["train"]) + len(values["test"])))
    assert {p.group for p in test.pairs} == set(load_pairs("queerbias-de").groups())


def test_seed_and_fraction_change_the_split():
    default = load_pairs("queerbias-de:test")
    other = load_pairs("queerbias-de:test?seed=1&test=0.5")
    assert other.meta["split"]["seed"] == 1 and other.meta["split"]["test_fraction"] == 0.5
    assert {p.pair_id for p in other.pairs} != {p.pair_id for p in default.pairs}


def test_any_pair_file_splits_by_a_column(tmp_path):
    rows = ["sent_more,sent_less,stereo_antistereo,bias_type,template"]
    for template in range(6):
        for group in ("gay", "lesbian"):
            rows.append(f"{group} {template} a,straight {template} a,stereo,{group},t{template}")
    path = tmp_path / "pairs.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    train = load_pairs(f"{path}:train?by=template&test=0.5")
    test = load_pairs(f"{path}:test?by=template&test=0.5")
    assert len(train) == len(test) == 6
    assert not shared_sentences(train.pairs, test.pairs)
    assert test.name == f"{path}:test?by=template&test=0.5"
    with pytest.raises(QueerbiasError, match="no column 'frame'"):
        load_pairs(f"{path}:test?by=frame")
    with pytest.raises(QueerbiasError, match="name the column to split by"):
        load_pairs(f"{path}:test")


def test_a_split_reports_sentences_its_sides_share(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("sent_more,sent_less,bias_type,t\nA x,B x,gay,1\nA x,C x,gay,2\n", encoding="utf-8")
    test = load_pairs(f"{path}:test?by=t&test=0.5")
    assert test.meta["split"]["shared_sentences"] == 1


def test_assign_values_never_leaves_a_side_empty():
    sides = assign_values(["a", "b"], 0.99, seed=3)
    assert sorted(sides.values()) == ["test", "train"]
    with pytest.raises(QueerbiasError, match="two distinct values"):
        assign_values(["a", "a"], 0.3, seed=0)


@pytest.mark.parametrize("spec,message", [
    ("queerbias-de:test?test=1.5", "between 0 and 1"),
    ("queerbias-de:test?seed=x", "integer"),
    ("queerbias-de:test?colour=red", "unknown option 'colour'"),
])
def test_bad_split_options_are_named(spec, message):
    with pytest.raises(QueerbiasError, match=message):
        parse_split(spec)


def test_plain_names_and_files_are_not_splits(tmp_path):
    assert parse_split("queerbias-de") is None
    path = tmp_path / "odd:train"
    path.write_text("sent_more,sent_less,bias_type\na,b,gay\n", encoding="utf-8")
    assert len(load_pairs(str(path))) == 1  # an existing file wins over the split syntax


def test_frame_disjoint_split_shares_no_frame_template_or_sentence():
    from queerbias.pairs.queerbias_de import split_keys

    train, test = (load_pairs(f"queerbias-de:{part}?by=frame+template") for part in ("train", "test"))
    keys = split_keys()
    for column in ("frame", "template"):
        assert not {keys[p.pair_id][column] for p in train.pairs} & {keys[p.pair_id][column] for p in test.pairs}
    assert not shared_sentences(train.pairs, test.pairs)
    assert test.meta["split"]["values"]["frame"]["test"] == ["name/1", "plural/0"]


def test_winoqueer_v0_splits_by_predicate(shared_data):
    from queerbias.pairs.winoqueer_v0 import predicate

    train, test = (load_pairs(f"winoqueer-v0:{part}", identical="drop") for part in ("train", "test"))
    assert predicate("Michael held hands with Kimberly.") == predicate("She held hands with him.") == \
        "_ held hands with _."
    assert predicate("They are very kind.") == "_ is very kind."
    sides = [{predicate(p.sent_more) for p in part.pairs} for part in (train, test)]
    assert not sides[0] & sides[1] and "_ held hands with _." in sides[1] and "_ is divorcing _." in sides[0]
    assert not shared_sentences(train.pairs, test.pairs)
    assert len(train) + len(test) == 5870 and {"gay", "lesbian"} <= set(test.groups())


def test_a_frame_sample_keeps_whole_frames_drawn_by_seed():
    from queerbias.pairs.sampling import chosen_indices, sample_frames

    family = load_pairs("queerbias-de-shapes:validation")
    frames = list(dict.fromkeys(p.frame for p in family.pairs))
    sample = sample_frames(family, 5, seed=3)
    kept = {frames[i] for i in chosen_indices(len(frames), 5, 3)}
    assert {p.frame for p in sample.pairs} == kept
    assert len(sample) == sum(p.frame in kept for p in family.pairs)
    assert sample.meta["sample"] == {"n": 5, "seed": 3, "of": len(frames), "unit": "frame"}
    with pytest.raises(QueerbiasError, match="names no frame"):
        sample_frames(load_pairs("queerbias-knowledge"), 2)
