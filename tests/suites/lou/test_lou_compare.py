"""Before/after on Lou runs (both views) through the comparator: statistics equal scipy's."""

import csv
import json

import numpy as np
import pytest
from scipy import stats

from queerbias.cli import main
from queerbias.comparison.compare import compare_runs, write_outputs
from queerbias.comparison.runs import load_run
from queerbias.errors import QueerbiasError
from queerbias.report.options import CompareOptions
from queerbias.report.paired_stats import adjust_pvalues
from queerbias.suites.lou.declaration import LouClassifierSettings, LouSettings
from queerbias.suites.lou.suite import LouClassifierSuite, LouLMSuite
from queerbias.suites.store import run_to_dir, summarise_rows, write_run


@pytest.fixture
def two_runs(tiny_gpt2, tiny_llama, lou_dir, tmp_path):
    for name, model in (("before", tiny_gpt2), ("after", tiny_llama)):
        run_to_dir(LouLMSuite(), str(model), str(lou_dir), tmp_path / name, LouSettings(n_resamples=200),
                   progress=False)
    return tmp_path / "before", tmp_path / "after"


def _deltas(path, task):
    with open(path / "items.csv", encoding="utf-8") as handle:
        return {(r["index"], r["strategy"]): float(r["delta"]) for r in csv.DictReader(handle)
                if r["task"] == task and r["delta"]}


def test_compare_matches_scipy(two_runs, tmp_path):
    before, after = two_runs
    document = compare_runs(load_run(before, "gpt2"), [load_run(after, "llama")], CompareOptions(resamples=500))
    comparison = document["comparisons"][0]
    assert document["suite"] == "lou" and document["scopes"] == ["all", "x-stance-de", "germeval-toxic"]
    d_before, d_after = _deltas(before, "x-stance-de"), _deltas(after, "x-stance-de")
    raw = []
    for strategy, entry in comparison["x-stance-de"].items():
        keys = sorted(k for k in d_before if k[1] == strategy)
        b, a = np.array([d_before[k] for k in keys]), np.array([d_after[k] for k in keys])
        assert entry["n"] == len(keys) == 5
        assert entry["delta_ll"] == pytest.approx((a - b).mean())
        assert entry["p_ll"] == pytest.approx(stats.wilcoxon(a, b).pvalue)
        assert entry["ci_ll"][0] <= entry["delta_ll"] <= entry["ci_ll"][1]
        assert entry["pref_after"] - entry["pref_before"] == pytest.approx(entry["delta_pref"])
        raw.append(entry["p_ll"])
    adjusted = [e["p_ll_adj"] for e in comparison["x-stance-de"].values()]
    assert adjusted == pytest.approx(list(adjust_pvalues(raw, "holm")))
    # the fixture's two tasks hold the same texts: pooled counts each pair once
    assert comparison["all"]["GenderStern"]["n"] == 5 and comparison["overall"]["n"] == 6 * 5

    paths = write_outputs(document, tmp_path / "cmp")
    assert paths[-1].name == "delta.json" and json.loads(paths[-1].read_text()) == document
    assert (tmp_path / "cmp" / "forest.png").read_bytes()[:4] == b"\x89PNG"
    assert "GenderStern" in (tmp_path / "cmp" / "delta.md").read_text(encoding="utf-8")


def test_compare_refuses_mixed_views_naming_them(two_runs, tmp_path):
    clf = _classifier_dir(tmp_path / "clf", BEFORE)
    with pytest.raises(QueerbiasError, match="lm is a lou run, clf a lou-classifier run"):
        compare_runs(load_run(two_runs[0], "lm"), [load_run(clf, "clf")])


# labels of instances 0-3, and per version the predictions of two hand-written classifier runs
LABELS = [1, 0, 1, 0]
BEFORE = {"original": [1, 0, 1, 1], "GenderStern": [0, 0, 1, 0], "Neutral": [1, 0, 1, 1]}
AFTER = {"original": [1, 0, 1, 0], "GenderStern": [1, 0, 0, 0], "Neutral": [1, 1, 1, 0]}


def _classifier_dir(path, predictions, checksum="c0ffee", instances=range(4)):
    """A finished classifier-view run written from hand-made rows, through the real summary code."""
    rows = [{"task": "germeval-toxic", "index": i, "label": LABELS[i], "strategy": version, "identical": False,
             "pred": preds[i], "prob_max": 0.9, "flipped": preds[i] != predictions["original"][i]}
            for i in instances for version, preds in predictions.items()]
    settings = LouClassifierSettings(n_resamples=50)
    meta = {"model": {"spec": path.name, "fingerprint": path.name}, "settings": {"max_length": 300},
            "data": {"name": "lou", "checksum": checksum, "licence": "CC BY-NC 4.0",
                     "tasks": [{"task": "germeval-toxic", "checksum": checksum, "n": len(instances)}]}}
    path.mkdir(parents=True)
    suite = LouClassifierSuite()
    write_run(suite, summarise_rows(suite, rows, settings, meta), path)
    return path


def test_classifier_compare_by_hand(tmp_path):
    before, after = _classifier_dir(tmp_path / "b", BEFORE), _classifier_dir(tmp_path / "a", AFTER)
    document = compare_runs(load_run(before, "b"), [load_run(after, "a")], CompareOptions(resamples=200))
    assert document["suite"] == "lou-classifier" and document["scopes"] == ["germeval-toxic"]
    entries = document["comparisons"][0]["germeval-toxic"]
    assert list(entries) == ["GenderStern", "Neutral"]
    stern, neutral = entries["GenderStern"], entries["Neutral"]
    # GenderStern flips: before [1,0,0,1], after [0,0,1,0] -> b 2 (flipped before only), c 1
    # correct: before [0,1,1,1], after [1,1,0,1] -> b 1, c 1
    assert (stern["b_flip"], stern["c_flip"], stern["b_acc"], stern["c_acc"]) == (2, 1, 1, 1)
    assert stern["flip_before"] == 50.0 and stern["flip_after"] == 25.0 and stern["delta_flip"] == -25.0
    assert stern["acc_before"] == stern["acc_after"] == 75.0
    assert stern["p_flip"] == pytest.approx(stats.binomtest(2, 3).pvalue)
    # Neutral flips: before none, after instance 1 -> b 0, c 1; correct [1,1,1,0] vs [1,0,1,1] -> b 1, c 1
    assert (neutral["b_flip"], neutral["c_flip"], neutral["b_acc"], neutral["c_acc"]) == (0, 1, 1, 1)
    for test in ("flip", "acc"):
        adjusted = adjust_pvalues([stern[f"p_{test}"], neutral[f"p_{test}"]], "holm")
        assert [stern[f"p_{test}_adj"], neutral[f"p_{test}_adj"]] == pytest.approx(list(adjusted))
    assert stern["ci_flip"][0] <= -25.0 <= stern["ci_flip"][1]

    paths = write_outputs(document, tmp_path / "cmp")
    assert json.loads(paths[-1].read_text()) == document
    table = (tmp_path / "cmp" / "delta.md").read_text(encoding="utf-8")
    assert "Δflip [95% CI]" in table and "Δacc" in table
    with open(tmp_path / "cmp" / "delta.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["group"], r["b_flip"], r["c_flip"]) for r in rows] == [("overall", "2", "2"), ("GenderStern", "2", "1"),
                                                                     ("Neutral", "0", "1")]
    assert "\\begin{tabular}" in (tmp_path / "cmp" / "delta.tex").read_text(encoding="utf-8")


def test_classifier_compare_refuses_other_items(tmp_path):
    before = load_run(_classifier_dir(tmp_path / "b", BEFORE), "b")
    other_data = load_run(_classifier_dir(tmp_path / "a", AFTER, checksum="other"), "a")
    with pytest.raises(QueerbiasError, match="data checksum differs"):
        compare_runs(before, [other_data])
    fewer = load_run(_classifier_dir(tmp_path / "f", AFTER, instances=range(3)), "f")
    with pytest.raises(QueerbiasError, match=r"different items: 3 only in b \['germeval-toxic/3/GenderStern'"):
        compare_runs(before, [fewer])


def test_cli_classifier_compare(tiny_classifier, lou_dir, tmp_path, capsys):
    base = ["--model", str(tiny_classifier), "--data", str(lou_dir), "--task", "germeval-toxic", "--no-progress"]
    assert main(["lou", "classify", *base, "--out", str(tmp_path / "a"), "--resamples", "50"]) == 0
    assert main(["lou", "classify", *base, "--out", str(tmp_path / "b"), "--resamples", "60"]) == 0
    capsys.readouterr()
    assert main(["lou", "compare", f"base={tmp_path / 'a'}", str(tmp_path / "b"), "--out", str(tmp_path / "c"),
                 "--resamples", "100"]) == 0
    assert "Δflip" in capsys.readouterr().out
    document = json.loads((tmp_path / "c" / "delta.json").read_text())
    stern = document["comparisons"][0]["germeval-toxic"]["GenderStern"]
    assert stern["n"] == 6 and stern["b_flip"] == stern["c_flip"] == 0  # the same classifier twice
    assert (tmp_path / "c" / "forest.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_lm_and_compare(tiny_gpt2, tiny_llama, lou_dir, tmp_path, capsys):
    base = ["--data", str(lou_dir), "--task", "x-stance-de", "--no-progress", "--resamples", "100"]
    assert main(["lou", "lm", "--model", str(tiny_gpt2), "--out", str(tmp_path / "a"), *base]) == 0
    assert main(["lou", "lm", "--model", str(tiny_llama), "--out", str(tmp_path / "b"), *base]) == 0
    capsys.readouterr()
    assert main(["lou", "compare", f"before={tmp_path / 'a'}", str(tmp_path / "b"), "--out", str(tmp_path / "c"),
                 "--resamples", "100"]) == 0
    printed = capsys.readouterr().out
    assert "Change against before" in printed and (tmp_path / "c" / "delta.json").is_file()
