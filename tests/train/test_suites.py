"""The gruff and lou suites as checkpoint benchmarks, next to the pair benchmark."""

from __future__ import annotations

import json

from queerbias.train.config import config_from_dict
from queerbias.train.runner import run_training

from .helpers import small_config


def test_gruff_and_lou_scored_at_checkpoints(tiny_llama, shared_data, tmp_path):
    benchmarks = [{"suite": "pairs", "sample": 10},
                  {"suite": "gruff", "data": str(shared_data / "gruff"), "sample": 2,
                   "options": {"settings": ["none"]}},  # tiny Llama has 128 positions
                  {"suite": "lou", "data": str(shared_data / "lou"), "sample": 2}]
    config = config_from_dict(small_config(tiny_llama, tmp_path / "run", max_steps=1, eval_every=1,
                                           eval__benchmarks=benchmarks))
    assert config.benchmark_dirs() == ["bias", "bias-gruff", "bias-lou"]
    result = run_training(config)
    last = result["metrics"][-1]
    assert set(last["benchmarks"]) == {"bias", "bias-gruff", "bias-lou"}
    for name in ("bias-gruff", "bias-lou"):
        summary = json.loads((tmp_path / "run" / "checkpoint-1" / name / "summary.json").read_text())
        assert summary["meta"]["step"] == 1
        assert last["benchmarks"][name]["overall"] is not None
    assert result["compare"] == [tmp_path / "run" / "compare"]  # pair benchmarks only
