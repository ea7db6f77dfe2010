"""Classifier view: hand-computed F1/flips/certainty, a tiny classifier end to end, --train, consistency."""

import csv
import json

import pytest

from queerbias.cli import main
from queerbias.errors import QueerbiasError
from queerbias.suites.lou.classifier import load_classifier, summarise
from queerbias.suites.lou.data import lou_spec
from queerbias.suites.lou.declaration import LouClassifierSettings
from queerbias.suites.lou.finetune import RECIPE_FILE, Recipe, finetune
from queerbias.suites.lou.metrics import ranking_consistency
from queerbias.suites.lou.suite import LouClassifierSuite
from queerbias.suites.store import run_to_dir


def run_classifier(model, data, out, tasks=()):
    return run_to_dir(LouClassifierSuite(), model, str(data), out, LouClassifierSettings(tasks=tuple(tasks)),
                      progress=False)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _rows(version, labels, preds, probs):
    return [{"task": "t", "index": i, "label": y, "strategy": version, "identical": False, "pred": p,
             "prob_max": q, "flipped": None} for i, (y, p, q) in enumerate(zip(labels, preds, probs))]


def test_summary_by_hand():
    labels = [1, 0, 1, 0]
    rows = _rows("original", labels, [1, 0, 0, 0], [0.9, 0.8, 0.6, 0.7]) + \
        _rows("GenderStern", labels, [0, 0, 0, 1], [0.6, 0.6, 0.6, 0.6])
    entries = summarise(rows, ["t"], ["GenderStern"])["tasks"]["t"]
    # original: class 0 TP 2 FP 1 FN 0 -> 4/5, class 1 TP 1 FN 1 -> 2/3
    assert entries["original"]["macro_f1"] == pytest.approx(100 * (4 / 5 + 2 / 3) / 2)
    stern = entries["GenderStern"]
    # GenderStern: class 0 TP 1 FP 2 FN 1 -> 2/5, class 1 TP 0 -> 0; flips at instances 0 and 3
    assert stern["macro_f1"] == pytest.approx(20.0)
    assert stern["delta_f1"] == pytest.approx(20.0 - 100 * (4 / 5 + 2 / 3) / 2)
    assert stern["flip_rate"] == 50.0
    assert stern["certainty"] == pytest.approx(0.6) and stern["delta_certainty"] == pytest.approx(-0.15)
    assert stern["ci_delta_f1"][0] <= stern["delta_f1"] <= stern["ci_delta_f1"][1]
    assert stern["ci_flip_rate"][0] <= 50.0 <= stern["ci_flip_rate"][1]
    # upstream's "f1-macro" of a binary task is class 1's F1: original TP 1, FN 1 -> 2/3; GenderStern TP 0 -> 0
    assert entries["original"]["f1_upstream"] == pytest.approx(200 / 3)
    assert stern["f1_upstream"] == 0.0 and stern["delta_f1_upstream"] == pytest.approx(-200 / 3)


def test_inputs_are_composed_as_upstream(tiny_classifier):
    """X-Stance: one string `text [SEP] topic`, one segment (upstream's compose_text_topic_samples);
    GermEval: the text's first N tokens (upstream's shorten_text), then the model's limit."""
    from queerbias.suites.lou.classifier import compose_input, encode_inputs
    from queerbias.suites.lou.data import lou_spec

    clf = load_classifier(str(tiny_classifier))
    tokenizer = clf.tokenizer
    assert compose_input(tokenizer, "wir sind dafür.", "bildung") == "wir sind dafür. [SEP] bildung"
    (encoded,) = encode_inputs(clf, [("wir sind dafür.", "bildung")])
    assert set(encoded["token_type_ids"]) == {0}  # a single segment, as upstream's tokenizer.encode(composed)
    assert encoded["input_ids"].count(tokenizer.sep_token_id) == 2  # the composed [SEP] and the closing one
    long_text = "das ist ein sehr langer satz " * 3
    short = compose_input(tokenizer, long_text, None, truncate_text=5)
    assert len(tokenizer.encode(short, add_special_tokens=False)) == 5
    assert compose_input(tokenizer, "kurz.", None, truncate_text=5) == "kurz."  # within the limit: unchanged
    tasks = lou_spec().tasks
    assert not tasks["x-stance-de"].truncate_text and tasks["germeval-toxic"].truncate_text


def test_summary_intervals_are_seeded_per_cell():
    labels = [1, 0, 1, 0, 1, 1, 0, 0]
    rows = _rows("original", labels, [1, 0, 0, 0, 1, 1, 0, 1], [0.9] * 8) + \
        _rows("GenderStern", labels, [0, 0, 0, 1, 1, 0, 0, 1], [0.6] * 8) + \
        _rows("Neutral", labels, [1, 1, 0, 0, 1, 1, 0, 1], [0.6] * 8)
    both = summarise(rows, ["t"], ["GenderStern", "Neutral"], seed=0, n_resamples=300)["tasks"]["t"]
    assert summarise(rows, ["t"], ["GenderStern", "Neutral"], seed=0, n_resamples=300)["tasks"]["t"] == both
    alone = summarise(rows, ["t"], ["Neutral"], seed=0, n_resamples=300)["tasks"]["t"]["Neutral"]
    assert alone == both["Neutral"]  # an interval does not depend on which other strategies are summarised
    other = summarise(rows, ["t"], ["GenderStern"], seed=1, n_resamples=300)["tasks"]["t"]["GenderStern"]
    assert other["ci_delta_f1"] != both["GenderStern"]["ci_delta_f1"]


def test_run_classifier_end_to_end(tiny_classifier, lou_dir, tmp_path):
    out = tmp_path / "out"
    summary = run_classifier(str(tiny_classifier), lou_dir, out, tasks=["germeval-toxic"])
    assert (out / "summary.png").read_bytes()[:8] == PNG_MAGIC and (out / "summary.md").is_file()
    assert json.loads((out / "summary.json").read_text()) == summary
    assert summary["suite"] == "lou-classifier" and summary["meta"]["model"]["num_labels"] == 2
    with open(out / "items.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 6 * 7
    base = {r["index"]: r["pred"] for r in rows if r["strategy"] == "original"}
    for strategy, entry in summary["tasks"]["germeval-toxic"].items():
        if strategy == "original":
            continue
        mine = [r for r in rows if r["strategy"] == strategy]
        assert entry["flip_rate"] == pytest.approx(100 * sum(r["pred"] != base[r["index"]] for r in mine) / 6)
        assert all(r["flipped"] == "False" for r in mine if r["identical"] == "True")
        assert entry["n_identical"] == 1


def test_masked_lm_without_head_is_refused(tiny_bert):
    with pytest.raises(QueerbiasError, match="--train"):
        load_classifier(str(tiny_bert))


def test_label_count_must_match(tiny_classifier, lou_dir, tmp_path, monkeypatch):
    from queerbias.suites.lou import data, suite

    spec = data.lou_spec()
    three = {**spec.tasks, "germeval-toxic": data.TaskInfo("germeval-toxic", "", ("a", "b", "c"))}
    for module in (data, suite):  # where the data module and the suite look it up
        monkeypatch.setattr(module, "lou_spec", lambda: type(spec)(**{**spec.__dict__, "tasks": three}))
    with pytest.raises(QueerbiasError, match="predicts 2 labels"):
        run_classifier(str(tiny_classifier), lou_dir, tmp_path / "out", tasks=["germeval-toxic"])


def test_finetune_then_classify(tiny_bert, lou_dir, tmp_path):
    recipe = Recipe(epochs=2, batch_size=4, learning_rate=1e-3)
    folder = finetune(str(tiny_bert), "germeval-toxic", tmp_path / "model", recipe, data_dir=lou_dir,
                      progress=False)
    record = json.loads((folder / RECIPE_FILE).read_text())
    assert [h["epoch"] for h in record["history"]] == [1, 2] and record["n_train"] == 12
    assert record["best_epoch"] == max(record["history"], key=lambda h: h["dev_macro_f1"])["epoch"]
    assert finetune(str(tiny_bert), "germeval-toxic", folder, recipe, data_dir=lou_dir) == folder
    with pytest.raises(QueerbiasError, match="trained differently"):
        finetune(str(tiny_bert), "germeval-toxic", folder, Recipe(epochs=1), data_dir=lou_dir)
    summary = run_classifier(str(folder), lou_dir, tmp_path / "out", tasks=["germeval-toxic"])
    assert summary["tasks"]["germeval-toxic"]["original"]["n"] == 6


def _summary(f1_original, f1s):
    strategies = ("Doppelnennung", "GenderStern", "GenderDoppelpunkt", "GenderGap", "Neutral", "De-e")
    entries = {s: {"macro_f1": f, "delta_f1": f - f1_original} for s, f in zip(strategies, f1s, strict=True)}
    return {"tasks": {"t": {"original": {"macro_f1": f1_original}, **entries}}}


def test_ranking_consistency_by_hand():
    document = ranking_consistency(strategies=lou_spec().strategies, summaries={
        "a": _summary(80, [79, 70, 71, 72, 78, 60]),
        "b": _summary(70, [69, 60, 61, 62, 68, 50]),  # the same strategy ranking, every model lower
        "c": _summary(60, [61, 62, 63, 64, 65, 40]),
    })
    pairs = {(p["a"], p["b"]): p for p in document["tasks"]["t"]["strategy_rankings"]}
    assert pairs[("a", "b")]["rho"] == pytest.approx(1.0)
    assert pairs[("a", "b")]["p"] == pytest.approx(2 / 720)  # exact: only the same and the reversed order
    # a vs c: ΔF1 ranks [6,2,3,4,5,1] vs [2,3,4,5,6,1] -> d² = 16+1+1+1+1 = 20 -> 1 - 6·20/(6·35)
    assert pairs[("a", "c")]["rho"] == pytest.approx(1 - 6 * 20 / (6 * 35))
    models = document["tasks"]["t"]["model_rankings"]
    assert models["GenderStern"]["rho"] == pytest.approx(0.5) and models["De-e"]["rho"] == pytest.approx(1.0)
    # three models: the six orders give rho 1, .5, .5, -.5, -.5, -1, so p(|rho| >= .5) = 1, p(|rho| >= 1) = 2/6
    assert models["GenderStern"]["p"] == pytest.approx(1.0) and models["De-e"]["p"] == pytest.approx(1 / 3)


def test_cli_classify(tiny_classifier, lou_dir, tmp_path, capsys):
    out = tmp_path / "cli"
    assert main(["lou", "classify", "--model", str(tiny_classifier), "--data", str(lou_dir), "--task",
                 "germeval-toxic", "--out", str(out), "--no-progress"]) == 0
    assert "flips % [95% CI]" in capsys.readouterr().out and (out / "summary.json").is_file()
    assert json.loads((out / "summary.json").read_text())["meta"]["settings"]["n_resamples"] == 2_000
    assert main(["lou", "classify", "--model", str(tiny_classifier), "--data", str(lou_dir), "--out",
                 str(tmp_path / "x"), "--no-progress"]) == 2  # two tasks without --train
