"""A training run judged by more than the distance (issue 20): pair-level |d|, stereotype
excess, crossed and harmful groups, the knowledge guard and the specificity ratio reach
metrics.jsonl, the closing lines and the model card."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from queerbias.cli import main
from queerbias.train.config import config_from_dict
from queerbias.train.runner import run_training

from .helpers import small_config


@pytest.fixture(scope="module")
def judged_run(tiny_gpt2, tmp_path_factory):
    """Two checkpoints of tiny GPT-2 judged on held-out pairs, guarded by the knowledge set (allowance 0)
    and beside the neutral mentions; what the run printed is kept beside it."""
    benchmarks = [{"suite": "pairs", "data": "queerbias-de:test", "sample": 12},
                  {"suite": "knowledge", "sample": 12, "guard": 0.0, "best": "accuracy"},
                  {"suite": "pairs", "data": "queerbias-de-neutral", "sample": 12, "name": "neutral"}]
    run = tmp_path_factory.mktemp("judged") / "run"
    config = config_from_dict(small_config(tiny_gpt2, run, max_steps=2, eval_every=1,
                                           eval__benchmarks=benchmarks, compare__resamples=50,
                                           compare__best="guarded", compare__ppl_margin=1000.0,
                                           learning_rate=0.15))  # moves the knowledge guard
    assert config.benchmark_dirs() == ["bias", "knowledge", "neutral"]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        run_training(config)
    (run.parent / "printed.txt").write_text(printed.getvalue())
    return run


def test_pair_level_figures_and_the_knowledge_guard_reach_every_output(judged_run):
    run = judged_run

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

    printed = (run.parent / "printed.txt").read_text().splitlines()
    ends = {text.split(",")[0]: text for text in printed if ", base -> step-2: " in text}
    assert "pair-level |d| " in ends["bias"] and "crossed 50 towards the stereotype: " in ends["bias"]
    assert "harmful: " in ends["bias"]
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


def test_the_verdict_is_kept_in_every_file_a_reader_opens(judged_run):
    """What the guards said, and the checkpoint compare chose, are in every benchmark's delta.json, on
    metrics.jsonl's last line and in the card's first paragraph, and `queerbias card` writes them again."""
    run = judged_run
    documents = {name: json.loads((run / "compare" / name / "delta.json").read_text())
                 for name in ("bias", "knowledge", "neutral")}
    verdict, refused = documents["bias"]["verdict"], documents["bias"]["refused"]
    assert all(d["verdict"] == verdict and d["refused"] == refused and "best" in d for d in documents.values())
    # the knowledge guard (allowance 0) refuses exactly the steps whose accuracy fell, on every benchmark
    fell = {c["after"]["step"]: c["overall"]["delta_accuracy"] for c in documents["knowledge"]["comparisons"]
            if c["overall"]["delta_accuracy"] < 0}
    assert refused == {str(step): f"knowledge: knowledge accuracy fell {-delta:.1f} pp > 0"
                       for step, delta in sorted(fell.items())}
    assert verdict["guards"] == {"knowledge": 0.0} and verdict["last_step"] == 2
    assert verdict["status"] == ("refused" if set(fell) == {1, 2} else "last refused" if 2 in fell else "passed")
    best = documents["bias"]["best"]
    assert verdict["chosen"] == {"benchmark": "bias", "label": best["label"], "step": best["step"],
                                 "criterion": "guarded", "criterion_description": best["criterion_description"]}
    lines = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert (lines[-1]["verdict"], lines[-1]["refused"]) == (verdict, refused)
    assert not any("verdict" in line for line in lines[:-1])
    assert f"The training run's verdict: {verdict['text']}." in (run / "compare" / "bias" / "delta.md").read_text()

    card = run / "final" / "README.md"
    first = card.read_text().split("\n\n# run\n\n", 1)[1].split("\n\n")[0]
    if verdict["status"] == "passed":
        assert first.startswith("Compare chose ") and "They passed the last checkpoint (step 2)" in first
    else:
        assert "refused by its guards: " in first and "not a mitigation to use" in first
    written = card.read_bytes()
    assert main(["card", str(run)]) == 0 and card.read_bytes() == written
