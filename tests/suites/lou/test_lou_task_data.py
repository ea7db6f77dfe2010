"""Issue 50: Lou's App. A.4, Table 5 over the task data the paper describes (train + dev + the test
originals), length in whitespace words, with the KL row; words as the default length everywhere."""

import json
import math
from collections import Counter

import numpy as np
import pytest

from queerbias.cli import main
from queerbias.suites.lou.declaration import LouClassifierSettings
from queerbias.suites.lou.readability import flesch_amstad
from queerbias.suites.registry import get_suite


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_table5_of_germeval_engaging_by_hand(shared_data):
    """Table 5, GermEval-Engaging: 2,276 samples (yes 635, no 1,641), length 30.6 ± 41.6 — the train
    (1,660) and dev (416) files and the 200 test originals, length in whitespace words."""
    folder = shared_data / "lou"
    if not (folder / "tasks" / "germeval-engaging" / "train.jsonl").is_file():
        pytest.skip("no Lou task splits in the shared data")
    _, ref = get_suite("lou-classifier").load_data(folder, LouClassifierSettings(tasks=("germeval-engaging",),
                                                                                 sample=5))
    table = ref.details["task_data"]["germeval-engaging"]
    splits = {name: read_jsonl(folder / "tasks" / "germeval-engaging" / f"{name}.jsonl") for name in ("train", "dev")}
    test = [{"text": r["original"], "label": r["label"]} for r in read_jsonl(folder / "lou" / "germeval-engaging.jsonl")]
    pooled = splits["train"] + splits["dev"] + test
    assert {k: v["n"] for k, v in table["splits"].items()} == {"train": 1660, "dev": 416, "test": 200}
    assert table["n"] == len(pooled) == 2276  # the whole data, not the run's sample of 5
    assert table["labels"] == {"nein": 1641, "ja": 635}
    lengths = [len(r["text"].split()) for r in pooled]
    assert table["length"]["mean"] == pytest.approx(np.mean(lengths))
    assert table["length"]["sd"] == pytest.approx(np.std(lengths, ddof=1))
    assert abs(table["length"]["mean"] - 30.6) < 0.06 and abs(table["length"]["sd"] - 41.6) < 0.05  # the paper
    flesch = [f for r in pooled if (f := flesch_amstad(r["text"])) is not None]
    assert table["flesch"]["sd"] == pytest.approx(np.std(flesch, ddof=1)) and table["flesch"]["sd"] > 100  # 103.9
    p, q = Counter(r["label"] for r in splits["train"]), Counter(r["label"] for r in test)
    kl = sum(p[k] / 1660 * math.log((p[k] / 1660) / (q[k] / 200)) for k in p)
    assert table["kl"] == pytest.approx(kl)


def test_table5_says_which_splits_it_read(lou_dir):
    """Where the data lacks a split, Table 5 is over what is there and says so; no train split, no KL."""
    _, ref = get_suite("lou-classifier").load_data(lou_dir, LouClassifierSettings())
    found = ref.details["task_data"]
    assert set(found["germeval-toxic"]["splits"]) == {"train", "dev", "test"}
    assert set(found["x-stance-de"]["splits"]) == {"test"} and found["x-stance-de"]["kl"] is None
    toxic = found["germeval-toxic"]
    assert toxic["n"] == sum(s["n"] for s in toxic["splits"].values())


def test_a_classifier_run_counts_length_in_words(tiny_classifier, lou_dir, tmp_path):
    """Sec. 6 ii, Table 3: the normalised length change in words by default (`--length tokens` stays an
    option), recomputed from the rows; summary.md carries Table 5 from the data."""
    out = tmp_path / "run"
    assert main(["run", "lou-classifier", "--model", str(tiny_classifier), "--data", str(lou_dir), "--out", str(out),
                 "--tasks", "germeval-toxic", "--n-resamples", "20", "--no-progress"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["analysis"]["length"] == "words" and "task_properties" not in summary["analysis"]
    from queerbias.comparison.runs import load_run

    rows = load_run(out).rows().to_dict("records")
    from queerbias.suites.lou.data import load_task

    texts = {(i.index, s): i.text(s) for i in load_task("germeval-toxic", lou_dir).instances
             for s in ("original", *i.reformulations)}
    assert all(r["words"] == len(texts[r["index"], r["strategy"]].split()) for r in rows)
    low, high = min(r["words"] for r in rows), max(r["words"] for r in rows)
    originals = {r["index"]: r["words"] for r in rows if r["strategy"] == "original"}
    changes = [100 * (r["words"] - originals[r["index"]]) / (high - low)
               for r in rows if r["strategy"] != "original" and not r["identical"]]
    found = summary["analysis"]["property_changes"]["germeval-toxic"]["overall"]["length"]
    assert found["n"] == len(changes) and found["change"] == pytest.approx(np.mean(changes))
    assert "Table 5" in (out / "summary.md").read_text()
    assert summary["meta"]["data"]["task_data"]["germeval-toxic"]["splits"]["train"]["n"] == 12
