"""precision auto: bf16 only where the hardware computes in bf16."""

from __future__ import annotations

import logging

import pytest

from queerbias.train import precision


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
