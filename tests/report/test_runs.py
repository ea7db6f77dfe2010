"""Loading score directories and refusing runs that cannot be paired."""

from __future__ import annotations

import pytest

from queerbias.comparison.runs import align_rows, check_compatible, load_run, load_runs, parse_run_arg
from queerbias.errors import QueerbiasError

from .score_dirs import make_pairs, shifted, write_score_dir


def test_load_run_keeps_ids_and_empty_categories_as_text(tmp_path):
    run = load_run(write_score_dir(tmp_path / "base", make_pairs()))
    pairs = run.pairs
    assert run.label == "base"
    assert pairs["pair_id"].iloc[0] == "0000"
    assert pairs["category"].iloc[0] == ""
    assert run.describe()["fingerprint"] == "fp-hf:test/model"


def test_unfinished_run_is_refused(tmp_path):
    path = write_score_dir(tmp_path / "run", make_pairs())
    (path / "summary.json").unlink()
    with pytest.raises(QueerbiasError, match="did not finish"):
        load_run(path)


def test_labels_from_argument_and_uniqueness(tmp_path):
    a = write_score_dir(tmp_path / "a" / "run", make_pairs())
    b = write_score_dir(tmp_path / "b" / "run", make_pairs())
    assert parse_run_arg(f"dpo={a}") == ("dpo", a)
    assert parse_run_arg(str(a)) == (None, a)
    with pytest.raises(QueerbiasError, match="LABEL=DIR"):
        load_runs([(None, a), (None, b)])
    assert [r.label for r in load_runs([("x", a), ("y", b)])] == ["x", "y"]


@pytest.mark.parametrize(("field", "values"), [("checksum", ("sha256:aaa", "sha256:bbb")),
                                               ("scoring_id", ("cfg-1", "cfg-2"))])
def test_different_data_or_config_is_refused_naming_both(tmp_path, field, values):
    pairs = make_pairs()
    before = load_run(write_score_dir(tmp_path / "before", pairs, **{field: values[0]}))
    after = load_run(write_score_dir(tmp_path / "after", pairs, **{field: values[1]}))
    with pytest.raises(QueerbiasError) as err:
        check_compatible(before, after)
    assert values[0] in str(err.value) and values[1] in str(err.value)


KEYS, TEXTS = ("pair_id",), ("sent_more", "sent_less", "group")


def test_different_items_are_refused(tmp_path):
    pairs = make_pairs()
    with pytest.raises(QueerbiasError, match=r"different items: 1 only in before \['0003'\]"):
        align_rows(pairs, pairs.drop(index=3), KEYS, TEXTS, ("before", "after"))
    edited = pairs.copy()
    edited.loc[5, "sent_less"] = "something else"
    with pytest.raises(QueerbiasError, match="differ in sent_less.*pair_id 0005"):
        align_rows(pairs, edited, KEYS, TEXTS, ("before", "after"))


def test_alignment_is_by_pair_id_not_row_order():
    pairs = make_pairs()
    after = shifted(pairs, seed=1, shift=2.0)
    before, aligned = align_rows(pairs, after.sample(frac=1, random_state=0), KEYS, TEXTS, ("before", "after"))
    assert list(before["pair_id"]) == list(aligned["pair_id"]) == list(pairs["pair_id"])
    assert list(aligned["soft"]) == list(after["soft"])
