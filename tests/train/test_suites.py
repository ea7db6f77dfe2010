"""Every suite as a checkpoint benchmark: scored at every checkpoint, sharded, compared at the end."""

from __future__ import annotations

import json

import pytest

from queerbias.errors import QueerbiasError
from queerbias.train.config import config_from_dict
from queerbias.train.runner import run_training
from tiny_data import write_lou_folder, write_templates

from .helpers import small_config


def test_every_suite_scored_and_compared_at_checkpoints(tiny_gpt2, tmp_path, capsys):
    """pairs, gruff, lou and gifi on a tiny GPT-2: a metrics line with every headline, and
    RUN/compare/<benchmark>/ with a trajectory for each suite."""
    templates = write_templates(tmp_path / "gruff")
    lou = write_lou_folder(tmp_path / "lou")
    benchmarks = [{"suite": "pairs", "sample": 10},
                  {"suite": "gruff", "data": str(templates), "sample": 4,
                   "options": {"settings": ["none", "d0"]}},  # the tiny model has 128 positions
                  {"suite": "lou", "data": str(lou), "sample": 2, "options": {"tasks": ["x-stance-de"],
                                                                              "n_resamples": 50}},
                  {"suite": "gifi", "sample": 1,
                   "options": {"dimensions": ["GDR", "SA"], "groups": ["er", "xier"], "max_new_tokens": 4,
                               "saof_names": 1, "saof_samples": 1, "n_resamples": 20}}]
    config = config_from_dict(small_config(tiny_gpt2, tmp_path / "run", max_steps=2, eval_every=1,
                                           eval__benchmarks=benchmarks, compare__resamples=50))
    names = ["bias", "gruff", "lou", "gifi"]  # folders named after the data (gruff, lou) or the suite (gifi)
    assert config.benchmark_dirs() == names
    result = run_training(config)
    last = result["metrics"][-1]
    assert set(last["benchmarks"]) == set(names)
    for name in names:
        summary = json.loads((tmp_path / "run" / "checkpoint-2" / name / "summary.json").read_text())
        assert summary["meta"]["step"] == 2 and last["benchmarks"][name]["overall"] == summary["headline"]["overall"]
    assert result["compare"] == [tmp_path / "run" / "compare" / name for name in names]
    for name, suite in zip(names, ("pairs", "gruff", "lou", "gifi"), strict=True):
        delta = json.loads((tmp_path / "run" / "compare" / name / "delta.json").read_text())
        assert delta["suite"] == suite and [row["step"] for row in delta["trajectory"]] == [0, 1, 2]
        assert delta["best"]["label"] is not None or delta["best"]["excluded"]
    card = (tmp_path / "run" / "final" / "README.md").read_text()  # every suite's headline on the card
    for name, measure in (("gruff", "- accuracy: "), ("lou", "- reformulation preferred: "),
                          ("gifi", "- GIFI score: ")):
        assert measure in card.split(f"### {name}:")[1].split("###")[0], name
    # the run ends with each benchmark's change in one line: pairs by distance, others by their measures
    printed = capsys.readouterr().out.splitlines()
    ends = {line.split(",")[0]: line for line in printed if ", base -> step-2: " in line}
    assert set(ends) == set(names)
    assert "distance to indifference bias " in ends["bias"] and "95% CI [" in ends["bias"]
    assert ends["gruff"].split(": ", 1)[1].startswith("accuracy ")
    assert any(line.startswith("reports: ") and "model card: " in line for line in printed)


@pytest.mark.parametrize(("bench", "message"), [
    ({"suite": "lou-classifier"}, "cannot be a training benchmark"),
    ({"suite": "gruff", "options": {"setings": ["none"]}}, r"eval.benchmarks\[0\].options.setings is unknown"),
    ({"suite": "gifi", "options": {"runs": 0}}, r"options.runs must be between 1 and 100, got 0"),
    ({"suite": "pairs", "options": {"seed": 3}}, "must not repeat sample or seed"),
])
def test_benchmark_settings_are_checked_before_loading(tmp_path, bench, message):
    with pytest.raises(QueerbiasError, match=message):
        config_from_dict(small_config("no-model-needed", tmp_path / "run", eval__benchmarks=[bench]))
