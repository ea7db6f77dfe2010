"""precision auto: bf16 only where the hardware computes in bf16."""

from __future__ import annotations

import logging

import pytest
import yaml

from queerbias.train import precision
from queerbias.train.config import config_from_dict
from queerbias.train.runner import run_training

from .helpers import assert_checkpoint_scores_as_a_fresh_load, small_config


@pytest.mark.parametrize("flags,expected", [("fpu avx2 avx512f avx512_bf16", True), ("fpu avx2 amx_bf16", True),
                                            ("fpu avx2 avx512f", False)])
def test_cpu_flags_decide(tmp_path, flags, expected):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: {flags}\n")
    assert precision.cpu_has_bf16(cpuinfo) is expected
    assert precision.cpu_has_bf16(tmp_path / "missing") is None


@pytest.mark.parametrize("native,expected", [(True, "bf16"), (False, "fp32"), (None, "fp32")])
def test_auto_on_a_cpu(monkeypatch, native, expected):
    monkeypatch.setattr(precision.torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: native)
    assert precision.resolve_precision("auto") == expected
    assert precision.resolve_precision("fp16") == "fp16"


def test_explicit_bf16_without_instructions_warns(monkeypatch, caplog):
    monkeypatch.setattr(precision.torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: False)
    with caplog.at_level(logging.WARNING):
        assert precision.resolve_precision("bf16") == "bf16"
    assert "without bf16 instructions" in caplog.text


def test_a_checkpoint_trained_under_bf16_is_scored_in_float32(tiny_gemma, tmp_path):
    """Training under bf16 autocast leaves checkpoint scoring in float32: a fresh float32 load of the
    checkpoint gives the scores the run recorded."""
    config = config_from_dict(small_config(
        tiny_gemma, tmp_path / "run", max_steps=2, eval_every=2, examples_per_device=2, precision="bf16",
        data__max_length=48, data__max_train_docs=4, data__max_validation_docs=2,
        eval__benchmarks=[{"suite": "pairs", "sample": 4}]))
    result = run_training(config)
    assert yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())["record"]["precision"] == "bf16"
    assert_checkpoint_scores_as_a_fresh_load(tmp_path / "run" / "checkpoint-2", tmp_path / "fresh", result)
