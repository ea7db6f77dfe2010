"""A new suite is one folder plus one registry entry: the toy suite runs, compares and lists."""

from __future__ import annotations

import json

import pytest

from queerbias.cli import main
from queerbias.suites import registry


@pytest.fixture
def registered(monkeypatch):
    """The one registry entry (in the package: a line in suites/registry.py)."""
    monkeypatch.setitem(registry.REGISTRY, "toy", "toy_suite:ToySuite")


def test_toy_suite_runs_compares_and_is_listed(registered, tiny_gpt2, tiny_llama, tmp_path, capsys):
    for name, model in (("a", tiny_gpt2), ("b", tiny_llama)):
        assert main(["run", "toy", "--model", str(model), "--out", str(tmp_path / name), "--sample", "5",
                     "--no-progress"]) == 0
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary["suite"] == "toy" and summary["overall"]["n"] == 5 and summary["meta"]["items"]["rows"] == 5
    assert "names prefer the word" in (tmp_path / "a" / "summary.md").read_text()
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "cmp"),
                 "--resamples", "100"]) == 0
    delta = json.loads((tmp_path / "cmp" / "delta.json").read_text())
    assert delta["suite"] == "toy" and {"b", "c", "p_prefers", "p_gap", "ci_gap"} <= set(delta["comparisons"][0]["overall"])
    assert main(["report", f"gpt2={tmp_path / 'a'}", f"llama={tmp_path / 'b'}", "--out", str(tmp_path / "r")]) == 0
    assert "| Overall |" in (tmp_path / "r" / "scores.md").read_text()
    capsys.readouterr()
    assert main(["suites"]) == 0
    assert "toy: is 'X ist <word>.'" in capsys.readouterr().out
    assert main(["run", "toy", "--model", str(tiny_gpt2), "--out", str(tmp_path / "c"), "--word", "schwul",
                 "--sample", "5", "--no-progress"]) == 0
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "c"), "--out", str(tmp_path / "x")]) == 2
    assert "setting word differs" in capsys.readouterr().err
