"""A training run judged by more than the distance (issue 20): pair-level |d|, stereotype
excess, crossed and harmful groups, the knowledge guard and the specificity ratio reach
metrics.jsonl, the closing lines and the model card."""

from __future__ import annotations

import json

from queerbias.train.config import config_from_dict
from queerbias.train.runner import run_training

from .helpers import small_config


def test_pair_level_figures_and_the_knowledge_guard_reach_every_output(tiny_gpt2, tmp_path, capsys):
    benchmarks = [{"suite": "pairs", "data": "queerbias-de:test", "sample": 12},
                  {"suite": "knowledge", "sample": 12, "guard": 0.0, "best": "accuracy"},
                  {"suite": "pairs", "data": "queerbias-de-neutral", "sample": 12, "name": "neutral"}]
    config = config_from_dict(small_config(tiny_gpt2, tmp_path / "run", max_steps=2, eval_every=1,
                                           eval__benchmarks=benchmarks, compare__resamples=50,
                                           compare__best="guarded", compare__ppl_margin=1000.0,
                                           learning_rate=0.15))  # moves the knowledge guard
    assert config.benchmark_dirs() == ["bias", "knowledge", "neutral"]
    run_training(config)
    run = tmp_path / "run"

    line = json.loads((run / "metrics.jsonl").read_text().splitlines()[-1])
    knowledge = line["benchmarks"]["knowledge"]
    assert knowledge["suite"] == "knowledge" and knowledge["label"] == "knowledge accuracy"
    assert 0 <= knowledge["overall"] <= 100 and "margin" in knowledge and knowledge["pair_gap"]["n"] == 12
    pairs = line["benchmarks"]["bias"]
    assert pairs["pair_gap"]["margin"] == 0.693 and pairs["stereotype_excess"] is not None

    delta = json.loads((run / "compare" / "bias" / "delta.json").read_text())
    last = delta["comparisons"][-1]
    assert {"abs_d_before", "delta_abs_d", "ci_abs_d", "p_below_margin"} <= set(last["pair_gap"])
    assert {"excess_before", "ci_excess", "crossed", "harmful", "groups"} <= set(last["direction"])
    knowledge_delta = json.loads((run / "compare" / "knowledge" / "delta.json").read_text())
    assert knowledge_delta["best"]["criterion"] == "accuracy"
    # chosen jointly: no checkpoint that raised the stereotype excess or lost any knowledge accuracy
    fell = {c["after"]["step"] for c in knowledge_delta["comparisons"] if c["overall"]["delta_accuracy"] < 0}
    rose = {c["after"]["step"] for c in delta["comparisons"] if c["direction"]["delta_excess"] > 0}
    best = delta["best"]
    assert best["criterion"] == "guarded" and {e["step"] for e in best["excluded"]} == fell | rose
    assert best["eligible"] == [f"step-{s}" for s in (1, 2) if s not in fell | rose]
    reasons = {e["step"]: e["reason"] for e in best["excluded"]}
    assert fell and all(reasons[s].startswith("knowledge: knowledge accuracy fell") for s in fell)
    # whether the excess also rose at a step is chance (it did on earlier installs, not with transformers
    # 5.24.0 and torch 2.13.0): the excess rule itself is pinned in tests/report/test_checkpoints.py
    assert all(reasons[s].startswith("stereotype excess rose") for s in rose - fell)

    printed = capsys.readouterr().out.splitlines()
    ends = {text.split(",")[0]: text for text in printed if ", base -> step-2: " in text}
    assert "pair-level |d| " in ends["bias"] and "crossed 50 towards the stereotype: " in ends["bias"]
    assert "HARMFUL for: " in ends["bias"]
    assert ends["knowledge"].split(": ", 1)[1].startswith("knowledge accuracy ")
    specificity = [text for text in printed if text.startswith("specificity ")]
    # the neutral mentions are a control set, not a stereotype benchmark: one ratio, bias / knowledge
    assert all(text.startswith("specificity bias / knowledge: ") for text in specificity)

    card = (run / "final" / "README.md").read_text()
    knowledge_block = card.split("### knowledge:")[1].split("###")[0]
    assert "- knowledge accuracy: " in knowledge_block and "- margin d: " in knowledge_block
    bias_block = card.split("### bias:")[1].split("###")[0]
    assert "mean \\|d\\| (nats)" in bias_block and "stereotype excess (pp)" in bias_block
    assert "Crossed 50 towards the stereotype:" in bias_block
