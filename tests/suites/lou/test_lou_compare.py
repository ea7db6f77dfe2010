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


def test_compare_refuses_other_views(two_runs, tiny_classifier, lou_dir, tmp_path):
    from queerbias.suites.lou.runner import run_classifier

    run_classifier(str(tiny_classifier), lou_dir, tmp_path / "clf", tasks=["germeval-toxic"], progress=False)
    with pytest.raises(QueerbiasError, match="LM-view"):
        load_run("clf", tmp_path / "clf")


def test_cli_lm_and_compare(tiny_gpt2, tiny_llama, lou_dir, tmp_path, capsys):
    base = ["--data", str(lou_dir), "--task", "x-stance-de", "--no-progress", "--resamples", "100"]
    assert main(["lou", "lm", "--model", str(tiny_gpt2), "--out", str(tmp_path / "a"), *base]) == 0
    assert main(["lou", "lm", "--model", str(tiny_llama), "--out", str(tmp_path / "b"), *base]) == 0
    capsys.readouterr()
    assert main(["lou", "compare", f"before={tmp_path / 'a'}", str(tmp_path / "b"), "--out", str(tmp_path / "c"),
                 "--resamples", "100"]) == 0
    printed = capsys.readouterr().out
    assert "Change against before" in printed and (tmp_path / "c" / "delta.json").is_file()
