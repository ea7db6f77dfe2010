"""Reading Lou folders: fields checked, tasks found, seeded samples, shared data when present."""

import json

import pytest

from queerbias.errors import DataError, QueerbiasError
from queerbias.suites.lou.data import (
    load_split,
    load_task,
    lou_spec,
    resolve_tasks,
    sample_task,
)


def test_spec_lists_the_six_strategies():
    assert lou_spec().strategies == ("Doppelnennung", "GenderStern", "GenderDoppelpunkt", "GenderGap", "Neutral", "De-e")
    assert lou_spec().tasks["x-stance-de"].text_pair == "topic"


def test_load_task_from_user_folder(lou_dir):
    task = load_task("x-stance-de", lou_dir)
    assert len(task.instances) == 6 and task.checksum
    first = task.instances[0]
    assert first.text("GenderStern") == "Die Lehrer*innen haben gestreikt."
    assert first.text("original") == first.original and first.text_pair == "Bildung"
    assert load_task("germeval-toxic", lou_dir).instances[0].text_pair is None


def test_tasks_default_to_those_in_the_folder(lou_dir):
    assert resolve_tasks(None, lou_dir) == ["x-stance-de", "germeval-toxic"]
    with pytest.raises(QueerbiasError, match="unknown Lou task"):
        resolve_tasks(["detox-toxic"])
    with pytest.raises(QueerbiasError, match="not found"):
        load_task("germeval-engaging", lou_dir)


def test_bad_rows_name_file_row_and_field(lou_dir):
    path = lou_dir / "lou" / "germeval-toxic.jsonl"
    rows = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(rows[1])
    record["label"] = 2
    path.write_text("\n".join([rows[0], json.dumps(record)]) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"row 2, field 'label'"):
        load_task("germeval-toxic", lou_dir)
    del record["GenderGap"]
    record["label"] = 0
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="field 'GenderGap'"):
        load_task("germeval-toxic", lou_dir)


def test_sample_is_seeded_and_keeps_file_order(lou_dir):
    task = load_task("x-stance-de", lou_dir)
    a, b = sample_task(task, 3, seed=1), sample_task(task, 3, seed=1)
    assert [i.index for i in a.instances] == [i.index for i in b.instances] == sorted(i.index for i in a.instances)
    assert a.sample == {"n": 3, "seed": 1, "of": 6}
    assert sample_task(task, 10) is task


def test_splits(lou_dir):
    train, path = load_split("germeval-toxic", "train", lou_dir)
    assert len(train) == 12 and path.name == "train.jsonl" and train[0].text_pair is None


def test_shared_lou_copy(shared_data):
    folder = shared_data / "lou"
    if not folder.is_dir():
        pytest.skip("no Lou copy in the shared data")
    task = load_task("x-stance-de", folder)
    assert len(task.instances) == 200
    assert task.instances[0].text("GenderStern") != task.instances[0].original
    dev, _ = load_split("x-stance-de", "dev", folder)
    assert {e.label for e in dev} == {0, 1} and all(e.text_pair for e in dev[:10])
