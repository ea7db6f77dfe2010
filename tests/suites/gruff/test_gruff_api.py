"""run_gruff output contract, reuse of finished runs, before/after comparison and the CLI."""

from __future__ import annotations

import json

import pytest

from queerbias.cli import main
from queerbias.errors import QueerbiasError
from queerbias.models import load_model
from queerbias.suites.gruff import run_gruff
from queerbias.suites.gruff.api import ITEM_COLUMNS, read_items
from queerbias.suites.gruff.compare import compare_gruff, load_gruff_run, write_compare

SETTINGS = ("none", "d0", "d1")  # longer contexts exceed the tiny models' 128 positions


@pytest.fixture
def gpt2_run(tiny_gpt2, tiny_templates_dir, tmp_path):
    lm = load_model(str(tiny_gpt2))
    lm.model.train()
    summary = run_gruff(lm, tiny_templates_dir, tmp_path / "gpt2", n=12, settings=SETTINGS, progress=False,
                        extra_meta={"step": 0})
    assert lm.model.training  # put back as found
    return lm, summary, tmp_path / "gpt2"


def test_output_contract(gpt2_run, tiny_templates):
    lm, summary, out = gpt2_run
    assert {p.name for p in out.iterdir()} == {"items.csv", "summary.json", "summary.md", "accuracy.png"}
    items = read_items(out / "items.csv")
    assert list(items.columns) == ITEM_COLUMNS and len(items) == 3 * 12
    assert items["n_distractors"].isna().sum() == 12 and items["distractor"].isna().sum() == 24
    scores = items[[c for c in ITEM_COLUMNS if c.startswith("score_")]].to_numpy()
    picked = [c.removeprefix("score_") for c in ITEM_COLUMNS if c.startswith("score_")]
    assert list(items["answer"]) == [picked[i] for i in scores.argmax(axis=1)]
    # no context: de-e and Sternchen nouns agree with en and xier alike (paper Sec. 6)
    neutral = (items["setting"] == "none") & items["system"].isin(["de_e", "sternchen"])
    agreeing = (items["answer"] == items["target"]) | (neutral & items["answer"].isin(["en", "xier"]))
    assert list(items["correct"]) == list(agreeing)
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk == json.loads(json.dumps(summary))
    meta = summary["meta"]
    assert meta["model"]["fingerprint"] == lm.fingerprint
    assert meta["templates"]["checksum"] == tiny_templates.checksum
    assert meta["generation"]["n"] == 12 and meta["scoring"]["reduction"] == "mean" and meta["step"] == 0
    assert {"torch", "transformers"} <= set(meta["versions"])
    assert set(summary["settings"]) == set(SETTINGS)
    assert summary["overall"]["n"] == 36
    assert "GRUFF pronoun fidelity" in (out / "summary.md").read_text()


def test_finished_run_is_reused_and_a_different_one_refused(gpt2_run, tiny_templates_dir):
    lm, summary, out = gpt2_run
    stamp = (out / "summary.json").stat().st_mtime_ns
    again = run_gruff(lm, tiny_templates_dir, out, n=12, settings=SETTINGS, progress=False, extra_meta={"step": 0})
    assert again == json.loads(json.dumps(summary)) and (out / "summary.json").stat().st_mtime_ns == stamp
    with pytest.raises(QueerbiasError, match="another model"):
        run_gruff(lm, tiny_templates_dir, out, n=8, settings=SETTINGS, progress=False)


def test_compare_same_model_is_unchanged_and_other_model_is_tested(gpt2_run, tiny_llama, tiny_templates_dir, tmp_path):
    lm, _, out = gpt2_run
    run_gruff(lm, tiny_templates_dir, tmp_path / "again", n=12, settings=SETTINGS, progress=False)
    run_gruff(str(tiny_llama), tiny_templates_dir, tmp_path / "llama", n=12, settings=SETTINGS, progress=False)
    base = load_gruff_run(out, "base")
    same = compare_gruff(base, [load_gruff_run(tmp_path / "again", "same")])
    for stats in same["comparisons"][0]["settings"].values():
        assert stats["delta"] == 0 and stats["b"] == stats["c"] == 0 and stats["p"] == 1.0
    runs = [base, load_gruff_run(tmp_path / "llama", "llama")]
    document = compare_gruff(runs[0], runs[1:])
    entry = document["comparisons"][0]["settings"]["d1"]
    items_base, items_llama = runs[0].items(), runs[1].items()
    d1 = items_base.merge(items_llama, on=["replicate", "item_id"])
    d1 = d1[d1["setting_x"] == "d1"]
    assert entry["b"] == int((d1["correct_x"] & ~d1["correct_y"]).sum())
    assert entry["c"] == int((~d1["correct_x"] & d1["correct_y"]).sum())
    assert entry["delta"] == pytest.approx(100 * (d1["correct_y"].mean() - d1["correct_x"].mean()))
    paths = write_compare(document, runs, tmp_path / "cmp")
    assert paths[-1].name == "delta.json" and {p.name for p in paths} >= {"delta.md", "delta.csv", "delta.tex",
                                                                           "accuracy.png"}


def test_compare_refuses_runs_on_other_items(gpt2_run, tiny_templates_dir, tmp_path):
    lm, _, out = gpt2_run
    run_gruff(lm, tiny_templates_dir, tmp_path / "seed1", n=12, seed=1, settings=SETTINGS, progress=False)
    with pytest.raises(QueerbiasError, match="generation"):
        compare_gruff(load_gruff_run(out), [load_gruff_run(tmp_path / "seed1")])


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
    assert "GRUFF accuracy change against base" in capsys.readouterr().out
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
