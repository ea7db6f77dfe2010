"""A new suite is one folder plus one registry entry: the toy suite runs, compares, lists, trains and
is judged by a study."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from queerbias.cli import main
from queerbias.suites import registry

TOY = Path(__file__).parent


def install(folder: Path, entry: str, monkeypatch) -> Path:
    """A distribution on sys.path with a `queerbias.suites` entry point, made here (no network, no install)."""
    info = folder / "toyplug-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toyplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[queerbias.suites]\n{entry} = toyplug:PluginSuite\n")
    (folder / "toyplug.py").write_text(f"from toy_suite import ToySuite\n\n\nclass PluginSuite(ToySuite):\n"
                                       f"    name = {entry!r}\n")
    monkeypatch.syspath_prepend(str(folder))
    return folder


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
    install(tmp_path / "plugin", "toy-plugin", monkeypatch)
    assert "toy-plugin" in registry.names()
    assert main(["run", "toy-plugin", "--model", str(tiny_gpt2), "--out", str(tmp_path / "out"), "--sample", "2",
                 "--no-progress"]) == 0
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["suite"] == "toy-plugin"
    install(tmp_path / "shadow", "pairs", monkeypatch)  # a package cannot replace a built-in suite
    assert type(registry.get_suite("pairs")).__name__ == "PairsSuite"


def test_a_suite_of_another_package_adds_its_own_command(tmp_path, monkeypatch, capsys):
    """Another package's suite brings its commands through its declaration (`Declaration.commands`); the
    built-in suites' aliases are modules of `queerbias.commands`, which no suite imports."""
    import toy_suite

    (tmp_path / "toycommand.py").write_text("def register(subparsers):\n    subparsers.add_parser('toy-hello')"
                                            ".set_defaults(func=lambda args: print('hello') or 0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry.REGISTRY, "toy", "toy_suite:ToySuite")
    monkeypatch.setattr(toy_suite.ToySuite, "commands", ("toycommand",))
    assert main(["toy-hello"]) == 0
    assert capsys.readouterr().out == "hello\n"


def test_a_study_judges_the_toy_suite_by_the_figures_it_declares(tiny_gpt2, tmp_path, monkeypatch):
    """No file of queerbias names the toy suite (it comes in through an entry point, which the study's cell
    processes see too), yet the study heads its tables with the figures the toy declares (`judged`: the
    gap chooses, a rise of the preference fails) and judges the run by them."""
    from study.helpers import run_cli, study_config, write_study

    plugin = install(tmp_path / "plugin", "toy", monkeypatch)
    path = os.pathsep.join([str(plugin), str(TOY), os.environ.get("PYTHONPATH", "")])
    config = study_config(tmp_path / "STUDY", {"gpt2": str(tiny_gpt2)}, seeds=[0],
                          runs={"lm": {"overrides": {"objective": "lm"}}},
                          benchmarks=[{"suite": "toy", "data": "names", "sample": 4, "name": "toy"}],
                          judge={"headline": "toy"})
    result = run_cli("study", "--config", str(write_study(tmp_path / "study.yaml", config)), cwd=tmp_path,
                     env={"PYTHONPATH": path})
    assert result.returncode == 0, result.stdout + result.stderr
    report = tmp_path / "STUDY" / "report"
    with open(report / "methods.csv", newline="", encoding="utf-8") as handle:
        figures = {row["figure"]: row for row in csv.DictReader(handle)}
    assert {"toy:overall:gap", "toy:overall:prefers"} <= set(figures)
    rose = float(figures["toy:overall:prefers"]["delta"]) > 0
    lowered = float(figures["toy:overall:gap"]["delta"]) < 0  # a run that did not lower the gap is never chosen
    verdict = figures["toy:overall:gap"]["verdict"]
    if rose or lowered:
        assert verdict == ("fails: preference rose on toy" if rose else "passes, chosen")
    else:
        assert verdict.startswith("passes every guard, but ") and "toy: gap" in verdict
    methods = (report / "methods.md").read_text()
    assert "| run | model | toy: gap | general perplexity | verdict |" in methods
    assert "raised the preference on no benchmark and raised general perplexity by at most 5%, the lowest mean gap " \
           "on toy (gap), if below the base's)" in methods
