"""The Python API gives the numbers of the CLI and of the files read back, and writes nothing in memory."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.figure import Figure

import queerbias as qb
from queerbias.cli import main
from queerbias.suites import rows as row_io
from queerbias.suites.pairs.criteria import CRITERIA
from queerbias.suites.pairs.declaration import PAIR_COLUMNS
from tiny_data import write_templates

PAIRS = ["--pairs", "queerbias-de", "--sample", "12", "--batch-size", "8", "--no-progress"]
OPTIONS = {"sample": 12, "batch_size": 8, "progress": False}
FIGURES = ("headline", "overall", "groups", "distance")
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cli_runs(tiny_gpt2, tiny_llama, tmp_path_factory):
    """`queerbias score` of both tiny causal models on the same 12 pairs."""
    root = tmp_path_factory.mktemp("cli")
    for name, model in (("gpt2", tiny_gpt2), ("llama", tiny_llama)):
        assert main(["score", "--model", str(model), "--out", str(root / name), *PAIRS]) == 0
    return root


def test_import_is_light_and_names_the_api():
    code = ("import sys, queerbias; print(sorted({'numpy', 'pandas', 'torch', 'scipy', 'matplotlib'} & "
            "set(sys.modules))); print(sorted(set(queerbias.__all__) - set(dir(queerbias))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[]", "[]"]
    assert qb.score.__doc__ and qb.ScoreRun is qb.RunRecord and "pairs" in qb.list_suites().index


def test_score_in_memory_writes_nothing_and_equals_the_cli_and_its_files(cli_runs, tiny_gpt2, tmp_path,
                                                                         monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("QUEERBIAS_CACHE", str(tmp_path / "cache"))
    memory = qb.score(str(tiny_gpt2), "queerbias-de", **OPTIONS)
    assert memory.path is None and not list(work.iterdir()) and not (tmp_path / "cache").exists()

    files = qb.load_run(cli_runs / "gpt2")
    pd.testing.assert_frame_equal(memory.pairs, files.pairs)  # values and dtypes
    pd.testing.assert_frame_equal(memory.groups, files.groups)
    assert list(memory.groups.columns) == ["n", "n_neutral", "bias_score", "bias_se", "soft_score", "soft_se"]
    assert list(memory.groups.index) == list(files.summary["groups"])
    assert row_io.to_text(memory.pairs, PAIR_COLUMNS, "pairs.csv") == (cli_runs / "gpt2" / "pairs.csv").read_text()
    assert {k: memory.summary[k] for k in FIGURES} == {k: files.summary[k] for k in FIGURES}
    assert memory.meta["run_key"] == files.meta["run_key"]
    assert files.to_markdown() == (cli_runs / "gpt2" / "summary.md").read_text()

    # a transformers model and tokenizer loaded by the caller, and a PairSet: the same run
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from queerbias.pairs.resolve import load_pairs

    objects = qb.score((AutoModelForCausalLM.from_pretrained(tiny_gpt2), AutoTokenizer.from_pretrained(tiny_gpt2)),
                       load_pairs("queerbias-de"), **OPTIONS)
    assert objects.meta["run_key"] == files.meta["run_key"]
    pd.testing.assert_frame_equal(objects.pairs, files.pairs)

    written = qb.score(str(tiny_gpt2), "queerbias-de", out=tmp_path / "api", **OPTIONS)
    assert written.path == tmp_path / "api"
    assert (tmp_path / "api" / "pairs.csv").read_bytes() == (cli_runs / "gpt2" / "pairs.csv").read_bytes()


def test_another_suite_gives_the_same_numbers_from_api_cli_and_files(tiny_gpt2, tmp_path):
    templates = str(write_templates(tmp_path / "templates"))
    assert main(["run", "gruff", "--model", str(tiny_gpt2), "--data", templates, "--sample", "4",
                 "--settings", "none", "d0", "--out", str(tmp_path / "cli"), "--no-progress"]) == 0
    memory = qb.run_suite("gruff", str(tiny_gpt2), templates, sample=4, settings=("none", "d0"), progress=False)
    files = qb.load_run(tmp_path / "cli")
    pd.testing.assert_frame_equal(memory.items, files.items)
    pd.testing.assert_frame_equal(memory.groups, files.groups)
    assert list(memory.groups.index) == ["none", "d0"]
    metrics = [{k: v for k, v in run.summary.items() if k != "meta"} for run in (memory, files)]
    assert metrics[0] == metrics[1] and memory.meta["run_key"] == files.meta["run_key"]
    with pytest.raises(AttributeError, match="a gruff run has no pairs; its rows are .items"):
        memory.pairs  # noqa: B018


def test_compare_gives_the_numbers_and_files_of_the_cli(cli_runs, tiny_gpt2, tiny_llama, tmp_path):
    runs = [str(cli_runs / "gpt2"), str(cli_runs / "llama")]
    assert main(["compare", *runs, "--out", str(tmp_path / "cli"), "--resamples", "200", "--seed", "3"]) == 0
    api = qb.compare(runs[0], [runs[1]], resamples=200, seed=3, out=tmp_path / "api")

    def undated(document: dict) -> dict:
        return {**document, "meta": {k: v for k, v in document["meta"].items() if k != "created_at"}}

    cli_delta = json.loads((tmp_path / "cli" / "delta.json").read_text())
    assert undated(api.delta) == undated(cli_delta)
    assert api.to_markdown() == (tmp_path / "cli" / "delta.md").read_text()
    assert (tmp_path / "api" / "delta.csv").read_text() == (tmp_path / "cli" / "delta.csv").read_text()
    # a CSV file cannot tell an empty text (no stars) from a missing value, so a column of
    # empty stars reads back as float
    pd.testing.assert_frame_equal(api.table.replace({"": float("nan")}), pd.read_csv(tmp_path / "cli" / "delta.csv"),
                                  check_dtype=False)
    assert len(api.table) == 1 + len(cli_delta["comparisons"][0]["groups"])

    # runs evaluated in memory: the same statistics
    memory = [qb.score(str(model), "queerbias-de", **OPTIONS) for model in (tiny_gpt2, tiny_llama)]
    in_memory = qb.compare(*memory, resamples=200, seed=3)
    assert in_memory.path is None
    for scope in ("overall", "groups", "distance"):
        assert in_memory.delta["comparisons"][0][scope] == cli_delta["comparisons"][0][scope]

    assert len(api.forest().axes) == 2
    levels = api.levels()  # levels.png's figure: a bias and a soft panel around 50
    assert [ax.get_xlabel() for ax in levels.axes] == ["bias score (%)", "soft score (%)"]
    assert (tmp_path / "api" / "levels.png").read_bytes()[:4] == b"\x89PNG"
    figure = Figure()
    ax = figure.subplots()
    assert api.forest(ax=ax, measure="soft") is figure and ax.get_xlabel() == "Δ soft score (percentage points)"


@pytest.mark.parametrize(("call", "message"), [
    (lambda runs: qb.score("m", "queerbias-de", smaple=3), "score: unknown option 'smaple'; options are the pairs"),
    (lambda runs: qb.score("m", "queerbias-de", sample="many"), "score.sample must be an integer"),
    (lambda runs: qb.score((object(), object()), "queerbias-de", dtype="bfloat16"),
     "dtype applies when the model is loaded from a spec"),
    (lambda runs: qb.score(42, "queerbias-de"), "model must be a spec, a LoadedModel or a .model, tokenizer. pair"),
    (lambda runs: qb.run_suite("wino", "m"), "unknown suite 'wino'"),
    (lambda runs: qb.run_suite("gruff", "m", replicates=0.5), r"run_suite\('gruff'\).replicates must be an integer"),
    (lambda runs: qb.compare(runs / "gpt2", runs / "llama", soft_test="t"), "compare.soft_test must be one of wilcoxon, ttest, got 't'"),
    (lambda runs: qb.compare(runs / "gpt2", runs / "llama", best="fastest"),
     "best-checkpoint criterion 'fastest' is not one of suite pairs"),
    (lambda runs: qb.compare(runs / "gpt2", runs / "gpt2"), "several runs are labelled gpt2; give them labels"),
])
def test_bad_options_are_one_clear_error(call, message, cli_runs):
    with pytest.raises(qb.QueerbiasError, match=message):
        call(cli_runs)


#: every error docs/api.md shows, raised here (the runs: the module's score folders, named gpt2 and llama)
DOCUMENTED_ERRORS = [
    lambda runs: qb.score("m", "queerbias-de", smaple=3),
    lambda runs: qb.score("m", "queerbias-de", sample="many"),
    lambda runs: qb.score((object(), object()), "queerbias-de", dtype="bfloat16"),
    lambda runs: qb.compare(runs / "gpt2", runs / "llama", soft_test="t"),
    lambda runs: qb.load_run("runs/no-such-run"),
    lambda runs: qb.compare(runs / "gpt2", runs / "gpt2"),
]


def test_docs_api_shows_the_errors_raised_and_the_criteria_there_are(cli_runs, tmp_path, monkeypatch):
    """docs/api.md's error texts are the ones raised (a `...` stands for the rest of a list), and its list of
    `best` criteria is the pair suite's (issue 51: it lacked `guarded`, and one error text had changed)."""
    text = (REPO / "docs" / "api.md").read_text()
    shown = text.split("## Errors")[1].split("```")[1].strip().splitlines()
    monkeypatch.chdir(tmp_path)  # where runs/no-such-run is not
    raised = []
    for call in DOCUMENTED_ERRORS:
        with pytest.raises(qb.QueerbiasError) as error:
            call(cli_runs)
        raised.append(str(error.value))
    for line in shown:
        pattern = ".*".join(re.escape(part) for part in line.split("..."))
        assert any(re.fullmatch(pattern, message) for message in raised), line
    assert len(shown) == len(raised)
    listed = text.split("`best` one of the suite's\ncriteria (pairs: ")[1].split(")")[0]
    assert re.findall(r"`(\w+)`", listed) == list(CRITERIA)
    assert "checkpoint-24" not in text
