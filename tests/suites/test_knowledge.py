"""The knowledge set and suite: the shipped definitional pairs, accuracy and margin by hand,
McNemar and Wilcoxon on a comparison, the best checkpoint by accuracy, and a tiny model end to end."""

from __future__ import annotations

import csv
import re
from collections import Counter
from importlib import resources

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from queerbias.comparison.checkpoints import choose_best
from queerbias.comparison.compare import compare_runs
from queerbias.comparison.runs import load_run
from queerbias.errors import DataError
from queerbias.pairs.io import read_pairs
from queerbias.pairs.resolve import load_pairs
from queerbias.report.options import CompareOptions
from queerbias.suites.knowledge.figures import knowledge_summary
from queerbias.suites.registry import get_suite
from queerbias.suites.store import run_to_dir
from queerbias.text.taxonomy import GROUPS, counterfactual_groups
from report.score_dirs import with_scores, write_score_dir

FAST = CompareOptions(resamples=300, seed=1)


def _shipped(path: str) -> list[dict]:
    with resources.as_file(resources.files("queerbias").joinpath(path)) as file:
        return list(csv.DictReader(file.open(encoding="utf-8")))


def _queer_groups() -> set[str]:
    return {name for name, group in GROUPS.items() if group.side == "queer"}


def test_knowledge_set_covers_every_group_in_german_and_some_english():
    rows = _shipped("data/knowledge/knowledge.csv")
    languages = Counter(row["language"] for row in rows)
    assert 120 <= languages["de"] <= 200 and 30 <= languages["en"] <= 60
    assert {row["group"] for row in rows if row["language"] == "de"} == _queer_groups()
    assert list(rows[0]) == ["pair_id", "sent_more", "sent_less", "group", "counterfactual_group", "category",
                             "fact", "language"]
    pair_set = load_pairs("queerbias-knowledge")
    assert len(pair_set) == len(rows) and pair_set.meta["languages"] == dict(sorted(languages.items()))


def test_knowledge_pairs_put_the_identity_first_and_go_both_ways():
    """The words that make a statement correct follow the identity phrase (a causal LM scores
    them given it), and the queer word is as often in the wrong sentence as in the right one."""
    rows = _shipped("data/knowledge/knowledge.csv")
    for row in rows:
        more, less = row["sent_more"].split(), row["sent_less"].split()
        assert more[-1] == less[-1] and more != less, row["pair_id"]
    names = re.compile(r"schwul|lesb|bisex|pansex|asex|demisex|polyam|trans|nicht-binär|agender|genderfluid|"
                       r"genderqueer|demigender|\binter\b|intergeschl|intersex|queer|\bgay\b|non-binary", re.I)
    sides = Counter()
    for row in rows:
        more, less = bool(names.search(row["sent_more"])), bool(names.search(row["sent_less"]))
        if more != less:
            sides[row["language"], "correct" if more else "wrong"] += 1
    for language in ("de", "en"):
        assert sides[language, "wrong"] >= 0.75 * sides[language, "correct"], sides


def test_the_default_split_holds_out_whole_facts():
    test, train = load_pairs("queerbias-knowledge:test"), load_pairs("queerbias-knowledge:train")
    fact = {row["pair_id"]: row["fact"] for row in _shipped("data/knowledge/knowledge.csv")}
    assert test.meta["split"]["by"] == ["fact"] and len(test) + len(train) == len(fact)
    assert not {fact[p.pair_id] for p in test.pairs} & {fact[p.pair_id] for p in train.pairs}


def test_neutral_mentions_cover_every_group():
    rows = _shipped("data/neutral_mentions/neutral_mentions.csv")
    assert 140 <= len(rows) <= 200 and {row["group"] for row in rows} == _queer_groups()
    assert {row["counterfactual_group"] for row in rows} <= {*counterfactual_groups, "monogamous"}
    pair_set = load_pairs("queerbias-de-neutral")
    assert pair_set.meta["control"] == "neutral-mentions" and pair_set.meta["language"] == "de"
    assert load_pairs("queerbias-de-neutral:test").meta["split"]["by"] == ["topic"]


def test_a_knowledge_file_whose_rows_are_not_pairs_is_refused_naming_file_and_row(tmp_path):
    path = tmp_path / "knowledge.csv"
    path.write_text("pair_id,sent_more,sent_less,group,counterfactual_group,category,fact,language\n"
                    "k1,Schwule Männer lieben Männer.,Heterosexuelle Männer lieben Männer.,gay,straight_men,"
                    "attraction,f1,de\n"
                    "k2,Lesbische Frauen lieben Frauen.,,lesbian,straight_women,attraction,f2,de\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"knowledge.csv, row 3, field 'sent_less': empty value"):
        read_pairs(path)


def _rows(pairs: list[tuple[str, float, float]]) -> pd.DataFrame:
    frame = pd.DataFrame([{"pair_id": f"k{i}", "group": group, "counterfactual_group": "", "category": "",
                           "sent_more": f"right {i}.", "sent_less": f"wrong {i}."}
                          for i, (group, _, _) in enumerate(pairs)])
    return with_scores(frame, [m for _, m, _ in pairs], [le for _, _, le in pairs])


# gay: d = +1, -0.5, 0 (a tie: wrong); lesbian: d = +2
ROWS = _rows([("gay", -10.0, -11.0), ("gay", -10.5, -10.0), ("gay", -10.0, -10.0), ("lesbian", -8.0, -10.0)])


def test_accuracy_and_margin_by_hand():
    summary = knowledge_summary(ROWS, 0.693)
    assert summary["overall"] == {"n": 4, "n_ties": 1, "accuracy": 50.0, "accuracy_se": 25.0,
                                  "margin": pytest.approx(0.625, abs=1e-4),
                                  "margin_se": pytest.approx(np.std([1, -0.5, 0, 2], ddof=1) / 2, abs=1e-4)}
    gay = summary["groups"]["gay"]
    assert (gay["accuracy"], gay["n_ties"], gay["margin"]) == (pytest.approx(100 / 3, abs=1e-3), 1,
                                                               pytest.approx(1 / 6, abs=1e-4))
    assert summary["pair_gap"]["overall"]["mean_abs_d"] == pytest.approx(3.5 / 4)
    headline = get_suite("knowledge").headline(summary).to_dict()
    assert headline["label"] == "knowledge accuracy" and headline["overall"] == 50.0
    assert headline["margin"] == summary["overall"]["margin"] and headline["pair_gap"]["mean_abs_d"] == 0.875


def _knowledge_run(path, rows, spec, step=None):
    folder = write_score_dir(path, rows, spec=spec, step=step)
    import json

    summary = json.loads((folder / "summary.json").read_text())
    summary |= {"suite": "knowledge", **knowledge_summary(rows, 0.693)}
    (folder / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return load_run(folder)


def test_compare_tests_accuracy_with_mcnemar_and_margin_with_wilcoxon(tmp_path):
    rng = np.random.default_rng(0)
    groups = ["gay"] * 20 + ["trans_women"] * 20
    before = _rows([(g, -10.0 + rng.normal(0, 1), -10.5 + rng.normal(0, 1)) for g in groups])
    after = _rows([(g, -10.0 + rng.normal(0, 1), -10.0 + rng.normal(0, 1)) for g in groups])
    runs = [_knowledge_run(tmp_path / "base", before, "base"), _knowledge_run(tmp_path / "after", after, "after")]
    document = compare_runs(runs[0], runs[1:], FAST)
    overall = document["comparisons"][0]["overall"]
    b = int(np.sum(before["biased"].astype(bool) & ~after["biased"].astype(bool)))
    c = int(np.sum(~before["biased"].astype(bool) & after["biased"].astype(bool)))
    assert (overall["b"], overall["c"]) == (b, c)
    assert overall["p_accuracy"] == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue)
    d_before = before["score_more"] - before["score_less"]
    d_after = after["score_more"] - after["score_less"]
    assert overall["p_margin"] == pytest.approx(stats.wilcoxon(d_after, d_before).pvalue)
    assert overall["delta_margin"] == pytest.approx(d_after.mean() - d_before.mean())
    gap = document["comparisons"][0]["pair_gap"]
    assert gap["abs_d_before"] == pytest.approx(np.abs(d_before).mean())
    assert "direction" not in document["comparisons"][0]


def test_best_checkpoint_keeps_accuracy():
    rows = [{"label": "base", "step": 0, "base": True, "accuracy": 80.0, "margin": 1.0, "ppl_change_pct": 0.0},
            {"label": "step-1", "step": 1, "base": False, "accuracy": 60.0, "margin": 2.0, "ppl_change_pct": 0.0},
            {"label": "step-2", "step": 2, "base": False, "accuracy": 75.0, "margin": 0.5, "ppl_change_pct": 0.0},
            {"label": "step-3", "step": 3, "base": False, "accuracy": 75.0, "margin": 0.9, "ppl_change_pct": 0.0}]
    best = choose_best(rows, "accuracy", 5.0, get_suite("knowledge").criteria)
    assert best["label"] == "step-3"


def test_knowledge_suite_on_a_tiny_model(tiny_gpt2, tmp_path):
    suite = get_suite("knowledge")
    settings = suite.Settings(sample=12)
    summary = run_to_dir(suite, str(tiny_gpt2), None, tmp_path / "k", settings, progress=False)
    assert summary["suite"] == "knowledge" and summary["meta"]["data"]["name"].startswith("queerbias-knowledge")
    assert summary["overall"]["n"] == 12 and 0 <= summary["overall"]["accuracy"] <= 100
    run = load_run(tmp_path / "k")
    rows = run.rows()
    assert summary["overall"]["accuracy"] == pytest.approx(100 * rows["biased"].mean())
    assert "Accuracy: % of definitional pairs" in (tmp_path / "k" / "summary.md").read_text()
