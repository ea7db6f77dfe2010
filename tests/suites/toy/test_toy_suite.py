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


def test_toy_suite_trains_compares_and_goes_on_the_card(registered, tiny_gpt2, tmp_path, capsys):
    """As a training benchmark: scored at every checkpoint, checked against the corpus, compared with
    its own best-checkpoint criterion, summed up in the closing line, on the card and in its model-index."""
    from huggingface_hub import ModelCard

    from queerbias.train.config import config_from_dict
    from queerbias.train.runner import run_training
    from train.helpers import small_config

    config = config_from_dict(small_config(tiny_gpt2, tmp_path / "run", max_steps=2, eval_every=1,
                                           eval__benchmarks=[{"suite": "toy", "sample": 4}],
                                           compare__best="smallest-gap", compare__resamples=50))
    assert config.benchmark_dirs() == ["toy"]
    result = run_training(config)
    run = tmp_path / "run"
    assert [m["step"] for m in result["metrics"]] == [0, 1, 2]
    assert result["metrics"][0]["corpus_overlap"]["shared_sentences"] == {"toy": 0}
    delta = json.loads((run / "compare" / "toy" / "delta.json").read_text())
    assert delta["suite"] == "toy" and delta["best"]["criterion"] == "smallest-gap"
    assert "toy, base -> step-2: prefers the word " in capsys.readouterr().out
    card = ModelCard.load(run / "final" / "README.md")
    assert {r.metric_type for r in card.data.eval_results} == {"prefers", "prefers_base", "gap", "gap_base"}
    assert "- prefers the word: " in card.text.split("### toy: toy")[1]

    runs = [f"{folder}={run / folder / 'toy'}" for folder in ("base", "checkpoint-1", "checkpoint-2")]
    assert main(["compare", *runs, "--out", str(tmp_path / "cmp"), "--best", "closest50", "--resamples", "50"]) == 0
    assert json.loads((tmp_path / "cmp" / "delta.json").read_text())["best"]["criterion"] == "closest50"
    capsys.readouterr()
    assert main(["compare", *runs, "--out", str(tmp_path / "cmp2"), "--best", "distance"]) == 2
    assert "criterion 'distance' is not one of suite toy (its criteria: closest50, smallest-gap)" in capsys.readouterr().err
    assert main(["compare", *reversed(runs), "--out", str(tmp_path / "cmp3")]) == 2  # BEFORE must come first
    assert "does not come after" in capsys.readouterr().err
    assert main(["report", *runs, "--out", str(tmp_path / "r")]) == 0
    assert (tmp_path / "r" / "scores.png").read_bytes()[:4] == b"\x89PNG"


def test_a_suite_of_another_package_comes_in_through_its_entry_point(tiny_gpt2, tmp_path, monkeypatch):
    """A distribution on sys.path with a `queerbias.suites` entry point, made here (no network, no install)."""
    def distribution(folder, entry: str):
        info = folder / "toyplug-0.1.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toyplug\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text(f"[queerbias.suites]\n{entry} = toyplug:PluginSuite\n")
        (folder / "toyplug.py").write_text(f"from toy_suite import ToySuite\n\n\nclass PluginSuite(ToySuite):\n"
                                           f"    name = {entry!r}\n")
        monkeypatch.syspath_prepend(str(folder))

    distribution(tmp_path / "plugin", "toy-plugin")
    assert "toy-plugin" in registry.names()
    assert main(["run", "toy-plugin", "--model", str(tiny_gpt2), "--out", str(tmp_path / "out"), "--sample", "2",
                 "--no-progress"]) == 0
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["suite"] == "toy-plugin"
    distribution(tmp_path / "shadow", "pairs")  # a package cannot replace a built-in suite
    assert type(registry.get_suite("pairs")).__name__ == "PairsSuite"
