"""Before/after on LM-view runs: paired statistics equal to scipy's on the item deltas."""

import csv
import json

import numpy as np
import pytest
from scipy import stats

from queerbias.cli import main
from queerbias.errors import QueerbiasError
from queerbias.report.compare import CompareOptions
from queerbias.report.paired_stats import adjust_pvalues
from queerbias.suites.lou import run_lou
from queerbias.suites.lou.compare import compare_runs, load_run, write_outputs


@pytest.fixture
def two_runs(tiny_gpt2, tiny_llama, lou_dir, tmp_path):
    for name, model in (("before", tiny_gpt2), ("after", tiny_llama)):
        run_lou(str(model), lou_dir, tmp_path / name, n_resamples=200, progress=False)
    return tmp_path / "before", tmp_path / "after"


def _deltas(path, task):
    with open(path / "items.csv", encoding="utf-8") as handle:
        return {(r["index"], r["strategy"]): float(r["delta"]) for r in csv.DictReader(handle)
                if r["task"] == task and r["delta"]}


def test_compare_matches_scipy(two_runs, tmp_path):
    before, after = two_runs
    document = compare_runs(load_run("gpt2", before), [load_run("llama", after)], CompareOptions(n_resamples=500))
    scopes = document["comparisons"][0]["scopes"]
    assert list(scopes) == ["germeval-toxic", "x-stance-de", "all"]
    d_before, d_after = _deltas(before, "x-stance-de"), _deltas(after, "x-stance-de")
    raw = []
    for strategy, entry in scopes["x-stance-de"].items():
        keys = sorted(k for k in d_before if k[1] == strategy)
        b, a = np.array([d_before[k] for k in keys]), np.array([d_after[k] for k in keys])
        assert entry["n"] == len(keys) == 5
        assert entry["change"] == pytest.approx((a - b).mean())
        assert entry["p_delta"] == pytest.approx(stats.wilcoxon(a, b).pvalue)
        assert entry["ci_change"][0] <= entry["change"] <= entry["ci_change"][1]
        assert entry["pref_after"] - entry["pref_before"] == pytest.approx(entry["change_pref"])
        raw.append(entry["p_delta"])
    adjusted = [e["p_delta_adj"] for e in scopes["x-stance-de"].values()]
    assert adjusted == pytest.approx(list(adjust_pvalues(raw, "holm")))
    # the fixture's two tasks hold the same texts: pooled counts each pair once
    assert scopes["all"]["GenderStern"]["n"] == 5

    paths = write_outputs(document, tmp_path / "cmp")
    assert paths[-1].name == "delta.json" and json.loads(paths[-1].read_text()) == document
    assert (tmp_path / "cmp" / "delta.png").read_bytes()[:4] == b"\x89PNG"
    assert "GenderStern" in (tmp_path / "cmp" / "delta.md").read_text(encoding="utf-8")


def test_compare_refuses_mixed_views(two_runs, tmp_path):
    clf = _classifier_dir(tmp_path / "clf", BEFORE)
    with pytest.raises(QueerbiasError, match="one view"):
        compare_runs(load_run("lm", two_runs[0]), [load_run("clf", clf)])
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "summary.json").write_text(json.dumps({"meta": {"view": "rating"}}))
    with pytest.raises(QueerbiasError, match="classifier-view"):
        load_run("x", tmp_path / "other")


# labels of instances 0-3, and per version the predictions of two hand-written classifier runs
LABELS = [1, 0, 1, 0]
BEFORE = {"original": [1, 0, 1, 1], "GenderStern": [0, 0, 1, 0], "Neutral": [1, 0, 1, 1]}
AFTER = {"original": [1, 0, 1, 0], "GenderStern": [1, 0, 0, 0], "Neutral": [1, 1, 1, 0]}


def _classifier_dir(path, predictions, checksum="c0ffee", instances=range(4)):
    """A finished classifier-view run directory written by hand (items.csv, summary.json)."""
    path.mkdir(parents=True)
    lines = ["task,index,label,strategy,identical,pred,prob_max,flipped"]
    for i in instances:
        for version, preds in predictions.items():
            lines.append(f"t,{i},{LABELS[i]},{version},False,{preds[i]},0.9,{preds[i] != predictions['original'][i]}")
    (path / "items.csv").write_text("\n".join(lines) + "\n")
    meta = {"view": "classifier", "model": {"spec": path.name, "fingerprint": path.name},
            "data": {"checksum": checksum, "tasks": [{"task": "t", "checksum": checksum}]}}
    (path / "summary.json").write_text(json.dumps({"tasks": {}, "meta": meta}))
    return path


def test_classifier_compare_by_hand(tmp_path):
    before, after = _classifier_dir(tmp_path / "b", BEFORE), _classifier_dir(tmp_path / "a", AFTER)
    document = compare_runs(load_run("b", before), [load_run("a", after)], CompareOptions(n_resamples=200))
    assert document["meta"]["view"] == "classifier"
    scopes = document["comparisons"][0]["scopes"]
    assert list(scopes) == ["t"] and list(scopes["t"]) == ["GenderStern", "Neutral"]
    stern, neutral = scopes["t"]["GenderStern"], scopes["t"]["Neutral"]
    # GenderStern flips: before [1,0,0,1], after [0,0,1,0] -> b 2 (flipped before only), c 1
    # correct: before [0,1,1,1], after [1,1,0,1] -> b 1, c 1
    assert (stern["b_flip"], stern["c_flip"], stern["b_acc"], stern["c_acc"]) == (2, 1, 1, 1)
    assert stern["flip_before"] == 50.0 and stern["flip_after"] == 25.0 and stern["change_flip"] == -25.0
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
    assert "Δflips [95% CI]" in table and "Δ accuracy on the reformulation" in table
    with open(tmp_path / "cmp" / "delta.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["strategy"], r["b_flip"], r["c_flip"]) for r in rows] == [("GenderStern", "2", "1"), ("Neutral", "0", "1")]
    assert "\\begin{tabular}" in (tmp_path / "cmp" / "delta.tex").read_text(encoding="utf-8")


def test_classifier_compare_refuses_other_items(tmp_path):
    before = load_run("b", _classifier_dir(tmp_path / "b", BEFORE))
    other_data = load_run("a", _classifier_dir(tmp_path / "a", AFTER, checksum="other"))
    with pytest.raises(QueerbiasError, match="different Lou data"):
        compare_runs(before, [other_data])
    fewer = load_run("f", _classifier_dir(tmp_path / "f", AFTER, instances=range(3)))
    with pytest.raises(QueerbiasError, match="different instances"):
        compare_runs(before, [fewer])


def test_cli_classifier_compare(tiny_classifier, lou_dir, tmp_path, capsys):
    base = ["--model", str(tiny_classifier), "--data", str(lou_dir), "--task", "germeval-toxic", "--no-progress"]
    assert main(["lou", "classify", *base, "--out", str(tmp_path / "a"), "--resamples", "50"]) == 0
    assert main(["lou", "classify", *base, "--out", str(tmp_path / "b"), "--resamples", "60"]) == 0
    capsys.readouterr()
    assert main(["lou", "compare", f"base={tmp_path / 'a'}", str(tmp_path / "b"), "--out", str(tmp_path / "c"),
                 "--resamples", "100"]) == 0
    assert "Δ label flips" in capsys.readouterr().out
    document = json.loads((tmp_path / "c" / "delta.json").read_text())
    stern = document["comparisons"][0]["scopes"]["germeval-toxic"]["GenderStern"]
    assert stern["n"] == 6 and stern["b_flip"] == stern["c_flip"] == 0  # the same classifier twice
    assert (tmp_path / "c" / "delta.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_lm_and_compare(tiny_gpt2, tiny_llama, lou_dir, tmp_path, capsys):
    base = ["--data", str(lou_dir), "--task", "x-stance-de", "--no-progress", "--resamples", "100"]
    assert main(["lou", "lm", "--model", str(tiny_gpt2), "--out", str(tmp_path / "a"), *base]) == 0
    assert main(["lou", "lm", "--model", str(tiny_llama), "--out", str(tmp_path / "b"), *base]) == 0
    capsys.readouterr()
    assert main(["lou", "compare", f"before={tmp_path / 'a'}", str(tmp_path / "b"), "--out", str(tmp_path / "c"),
                 "--resamples", "100"]) == 0
    printed = capsys.readouterr().out
    assert "Change against before" in printed and (tmp_path / "c" / "delta.json").is_file()
