"""GRUFF through the run store and the comparator: output contract, reuse, replicates, compare, CLI."""

from __future__ import annotations

import json
import math

import pytest
from scipy.stats import binomtest

from queerbias.cli import main
from queerbias.comparison.compare import compare_runs, write_outputs
from queerbias.comparison.runs import load_run
from queerbias.errors import QueerbiasError
from queerbias.models import load_model
from queerbias.report.options import CompareOptions
from queerbias.suites.gruff.declaration import GruffSettings
from queerbias.suites.gruff.suite import GruffSuite
from queerbias.suites.store import run_to_dir

SETTINGS = ("none", "d0", "d1")  # longer contexts exceed the tiny models' 128 positions
FAST = CompareOptions(resamples=200)


def settings(**changes) -> GruffSettings:
    return GruffSettings(**{"sample": 12, "settings": SETTINGS, **changes})


@pytest.fixture
def gpt2_run(tiny_gpt2, tiny_templates_dir, tmp_path):
    lm = load_model(str(tiny_gpt2))
    lm.model.train()
    summary = run_to_dir(GruffSuite(), lm, str(tiny_templates_dir), tmp_path / "gpt2", settings(), progress=False,
                         extra_meta={"step": 0})
    assert lm.model.training  # put back as found
    return lm, summary, tmp_path / "gpt2"


def test_output_contract(gpt2_run, tiny_templates):
    lm, summary, out = gpt2_run
    assert {p.name for p in out.iterdir()} == {"items.csv", "summary.json", "summary.md", "summary.png"}
    items = load_run(out).rows()
    assert len(items) == 3 * 12 and items["n_distractors"].isna().sum() == 12 and items["distractor"].isna().sum() == 24
    picked = ["er", "sie", "en", "xier"]
    scores = items[[f"score_{p}" for p in picked]].to_numpy()
    assert list(items["answer"]) == [picked[i] for i in scores.argmax(axis=1)]
    # no context: de-e and Sternchen nouns agree with en and xier alike (paper Sec. 6)
    neutral = (items["setting"] == "none") & items["system"].isin(["de_e", "sternchen"])
    agreeing = (items["answer"] == items["target"]) | (neutral & items["answer"].isin(["en", "xier"]))
    assert list(items["correct"]) == list(agreeing)
    assert json.loads((out / "summary.json").read_text()) == summary
    assert summary["suite"] == "gruff" and summary["headline"]["overall"] == summary["overall"]["accuracy"]
    meta = summary["meta"]
    assert meta["model"]["fingerprint"] == lm.fingerprint and meta["step"] == 0
    assert meta["data"]["checksum"] == tiny_templates.checksum and meta["data"]["generation"]["n"] == 12
    assert meta["scoring"]["reduction"] == "mean" and meta["items"]["rows"] == 36
    assert set(summary["settings"]) == set(SETTINGS) and summary["overall"]["n"] == 36
    assert "GRUFF pronoun fidelity" in (out / "summary.md").read_text()


def test_finished_run_is_reused_and_a_different_one_refused(gpt2_run, tiny_templates_dir):
    lm, summary, out = gpt2_run
    stamp = (out / "summary.json").stat().st_mtime_ns
    again = run_to_dir(GruffSuite(), lm, str(tiny_templates_dir), out, settings(), progress=False)
    assert again == summary and (out / "summary.json").stat().st_mtime_ns == stamp
    with pytest.raises(QueerbiasError, match=r"other settings: sample \(12 in the folder, 8 now\)"):
        run_to_dir(GruffSuite(), lm, str(tiny_templates_dir), out, settings(sample=8), progress=False)


def test_replicates_count_each_instance_once(tiny_gpt2, tiny_llama, tiny_templates_dir, tmp_path):
    """Three replicates of the no-context set hold its 16 instances three times: n, SE and the
    McNemar counts are over the 16 distinct instances; per set: mean ± SD over the three sets."""
    three = GruffSettings(settings=("none",), replicates=3)
    runs = {}
    for name, model in (("gpt2", tiny_gpt2), ("llama", tiny_llama)):
        run_to_dir(GruffSuite(), str(model), str(tiny_templates_dir), tmp_path / name, three, progress=False)
        runs[name] = load_run(tmp_path / name)
    rows = runs["gpt2"].rows()
    assert len(rows) == 48 and rows["item_id"].nunique() == 16
    overall = runs["gpt2"].summary["overall"]
    p = rows.drop_duplicates("item_id")["correct"].mean()
    assert overall["n"] == 16 and overall["se"] == pytest.approx(100 * math.sqrt(p * (1 - p) / 16))
    replicates = runs["gpt2"].summary["replicates"]
    assert replicates["overall"]["per_set"] == [100 * p] * 3 and replicates["overall"]["sd"] == 0.0
    comparison = compare_runs(runs["gpt2"], [runs["llama"]], FAST)["comparisons"][0]["overall"]
    distinct = [r.rows().drop_duplicates("item_id").set_index("item_id")["correct"] for r in runs.values()]
    b = int((distinct[0] & ~distinct[1]).sum())
    c = int((~distinct[0] & distinct[1]).sum())
    assert (comparison["n"], comparison["b"], comparison["c"]) == (16, b, c)


def test_compare_same_model_is_unchanged_and_other_model_is_tested(gpt2_run, tiny_llama, tiny_templates_dir,
                                                                   tmp_path):
    lm, _, out = gpt2_run
    run_to_dir(GruffSuite(), lm, str(tiny_templates_dir), tmp_path / "again", settings(), progress=False)
    run_to_dir(GruffSuite(), str(tiny_llama), str(tiny_templates_dir), tmp_path / "llama", settings(),
               progress=False)
    base = load_run(out, "base")
    same = compare_runs(base, [load_run(tmp_path / "again", "same")], FAST)["comparisons"][0]
    for stats in same["settings"].values():
        assert stats["delta_accuracy"] == 0 and stats["b"] == stats["c"] == 0 and stats["p_accuracy"] == 1.0
    llama = load_run(tmp_path / "llama", "llama")
    document = compare_runs(base, [llama], FAST)
    assert document["suite"] == "gruff" and document["scopes"] == ["settings", "pronouns", "pronoun_cases"]
    entry = document["comparisons"][0]["settings"]["d1"]
    merged = base.rows().merge(llama.rows(), on=["replicate", "item_id"])
    d1 = merged[merged["setting_x"] == "d1"]
    assert entry["b"] == int((d1["correct_x"] & ~d1["correct_y"]).sum())
    assert entry["c"] == int((~d1["correct_x"] & d1["correct_y"]).sum())
    assert entry["delta_accuracy"] == pytest.approx(100 * (d1["correct_y"].mean() - d1["correct_x"].mean()))
    # Fig. 5 as a paired scope: McNemar per pronoun set x case over the settings with an introduction
    introduced = merged[merged["setting_x"] != "none"]
    cells = document["comparisons"][0]["pronoun_cases"]
    assert len(cells) == len(introduced.groupby(["target_x", "case_x"]))
    for (pronoun, case), part in introduced.groupby(["target_x", "case_x"]):
        cell = cells[f"{pronoun} {case}"]
        b, c = int((part["correct_x"] & ~part["correct_y"]).sum()), int((~part["correct_x"] & part["correct_y"]).sum())
        assert (cell["n"], cell["b"], cell["c"]) == (len(part), b, c)
        assert cell["p_accuracy"] == pytest.approx(1.0 if b + c == 0 else binomtest(b, b + c, 0.5).pvalue)
    assert "rho" in document["comparisons"][0]["model_correlation"]
    paths = write_outputs(document, tmp_path / "cmp")
    assert paths[-1].name == "delta.json" and {p.name for p in paths} >= {"delta.md", "delta.csv", "delta.tex",
                                                                           "forest.png"}
    text = (tmp_path / "cmp" / "delta.md").read_text()
    assert "accusative stereotype scores" in text and "(paper Fig. 5)" in text and "poss (Fig. 14, genitive)" in text
    assert {"model_correlation_nom", "model_correlation_dat", "model_correlation_poss"} <= set(document["comparisons"][0])


def test_compare_refuses_runs_on_other_items(gpt2_run, tiny_templates_dir, tmp_path):
    lm, _, out = gpt2_run
    run_to_dir(GruffSuite(), lm, str(tiny_templates_dir), tmp_path / "seed1", settings(seed=1), progress=False)
    with pytest.raises(QueerbiasError, match=r"setting seed differs \(gpt2: 0, seed1: 1\)"):
        compare_runs(load_run(out), [load_run(tmp_path / "seed1")])


def test_cli_generate_score_compare(tiny_gpt2, tiny_templates_dir, tmp_path, capsys):
    assert main(["gruff", "generate", "--templates", str(tiny_templates_dir), "--settings", "none", "d1",
                 "--out", str(tmp_path / "items.csv")]) == 0
    printed = capsys.readouterr().out
    assert "d1" in printed and "576" in printed  # full count of the tiny set
    lines = (tmp_path / "items.csv").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + 16 + 2 * 2 * 4 * 3 and "text_xier" in lines[0]
    for name in ("a", "b"):
        assert main(["gruff", "score", "--model", str(tiny_gpt2), "--templates", str(tiny_templates_dir),
                     "--settings", "none", "d1", "--n", "8", "--out", str(tmp_path / name), "--no-progress"]) == 0
    assert main(["gruff", "compare", f"base={tmp_path / 'a'}", str(tmp_path / "b"), "--out", str(tmp_path / "c"),
                 "--resamples", "200"]) == 0
    data = json.loads((tmp_path / "c" / "delta.json").read_text())["meta"]["data"]["name"]
    title = "gruff" if data == "gruff" else f"gruff ({data})"  # the suite, and its data where it is named apart
    assert (tmp_path / "c" / "delta.md").read_text().startswith(f"# {title}: change against base\n")
    assert (tmp_path / "c" / "delta.json").is_file()
    assert main(["gruff", "compare", str(tmp_path / "a"), "--out", str(tmp_path / "d")]) == 2


def test_missing_templates_download_failure_is_a_user_error(tmp_path, monkeypatch):
    import urllib.error
    import urllib.request

    from queerbias.suites.gruff.templates import load_templates

    def offline(url, timeout):
        raise urllib.error.URLError("offline")

    monkeypatch.setenv("QUEERBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(urllib.request, "urlopen", offline)
    with pytest.raises(QueerbiasError, match="TAI-HAMBURG/gruff"):
        load_templates(None)
    with pytest.raises(QueerbiasError, match="no task.tsv and context.tsv"):
        load_templates(tmp_path)
