"""Issue 46: the seed study in one command, on tiny models of all eight families, and the same study as a
Slurm array.

One `queerbias study` call runs configs/study-seed.yaml (tests/study/seed_study.py) with 2 seeds and 2
steps and finishes with no hand step: every XLM cell adopts its model's shared base (a base key built
without the language and kind refused every XLM cell after the first), XLM-RoBERTa trains with
`data.max_length` above its usable positions (clipped, with a line that says so), per-pair scores equal
the reference loop for every family, and the report holds Tables 4-7 in the paper's shape. A smaller
study of both XLM families runs locally and as a simulated Slurm array (the base tasks, then the cell
tasks as separate processes in a shuffled order, two at once, one killed and rerun): the reports match.
"""

from __future__ import annotations

import csv
import json
import os
import random
import re
import shutil
import statistics
import subprocess
from pathlib import Path

import pytest

from queerbias.models import load_model
from queerbias.pairs.schema import Pair
from queerbias.scoring.config import ScoringConfig
from queerbias.study.cells import read_plan
from queerbias.suites.pairs.reference import naive_sentence_pair
from rounded import rounds_from
from tiny_models import SEED_STUDY_FAMILIES

from .helpers import completed_to_json, once_per_session, run_cli
from .seed_study import MODELS, seed_study_file

BENCHMARKS = ("winoqueer-de", "survey")
SEEDS = (0, 1)
#: the array test's study: both XLM families (one folder of weights, two kinds: two shared bases)
XLM = ["xlm-clm", "xlm-mlm"]


def _rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def seed_study(tiny_family, tmp_path_factory, request):
    """The study, run once per session (`once_per_session`): with pytest-xdist both workers take tests of
    this module, and a module fixture would run the 16 cells on each."""
    def run(work: Path, shared: Path) -> dict:
        config = seed_study_file(work, tiny_family, work / "STUDY")
        done = run_cli("study", "--config", str(config), "--jobs", "2", cwd=work)
        return {"root": str(work / "STUDY"), "done": completed_to_json(done)}

    record = once_per_session(request, tmp_path_factory, "seed-study", run)
    return Path(record["root"]), subprocess.CompletedProcess(**record["done"])


def test_the_seed_study_runs_every_family_and_seed_in_one_call(seed_study):
    root, done = seed_study
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "study complete" in done.stdout and "failed" not in done.stdout
    cells = [f"{model}/lm/seed-{seed}" for model in MODELS for seed in SEEDS]
    for name in cells:
        launches = (root / "runs" / name / "study-cell-launches.jsonl").read_text().splitlines()
        assert len(launches) == 2 and json.loads(launches[1])["returncode"] == 0, name  # one launch, no hand step
    for model in MODELS:  # of the two cells of a model, started together, one scored the base and one adopted it
        for benchmark in BENCHMARKS:
            metas = [json.loads((root / "runs" / model / "lm" / f"seed-{s}" / "base" / benchmark / "summary.json")
                                .read_text())["meta"] for s in SEEDS]
            assert sorted("shared_base" in meta for meta in metas) == [False, True], (model, benchmark)
            assert len({meta["run_key"] for meta in metas}) == 1
    log = (root / "runs/xlm-roberta/lm/seed-0/study-cell.log").read_text()
    assert ("config key 'data.max_length': " in log and "takes at most 128 tokens (max_position_embeddings 130 "
            "less the 2 positions up to its padding index 1" in log and "cut at 128, not 512" in log)


def test_per_pair_scores_equal_the_reference_loop_for_every_family(seed_study, tiny_family):
    """The base model's and a trained checkpoint's pairs.csv, as the study wrote them, against the naive
    reference loop on the same weights (an XLM given German's language id, as the study passes it)."""
    root, _ = seed_study
    for model, (builder, kind) in SEED_STUDY_FAMILIES.items():
        lang = "de" if builder == "xlm" else None
        step = json.loads((root / "runs" / model / "lm/seed-0/compare/survey/delta.json").read_text())[
            "comparisons"][-1]["after"]["step"]
        for folder, weights in ((root / "base" / model, tiny_family(builder)),
                                (root / "runs" / model / f"lm/seed-0/checkpoint-{step}", root / "runs" / model /
                                 "lm/seed-0/final")):
            lm = load_model(str(weights), kind=kind)  # the reference passes langs itself
            for benchmark in BENCHMARKS:
                for row in _rows(folder / benchmark / "pairs.csv"):
                    pair = Pair(row["pair_id"], row["sent_more"], row["sent_less"], row["group"])
                    more, less = naive_sentence_pair(lm, pair, ScoringConfig(), lang=lang)
                    assert rounds_from(float(row["score_more"]), more), (model, folder.name, benchmark, row)
                    assert rounds_from(float(row["score_less"]), less), (model, folder.name, benchmark, row)


def test_the_report_shows_tables_4_to_7_in_the_papers_shape(seed_study):
    root, _ = seed_study
    header = "| Identity | " + " | ".join(m.replace("_", "\\_") for m in MODELS) + " | Mean |"  # Markdown-escaped
    for benchmark in BENCHMARKS:
        base = (root / f"report/base-{benchmark}.md").read_text()
        assert header in base and "the seed study's Tables 4 and 5" in base
        summaries = {m: json.loads((root / "base" / m / benchmark / "summary.json").read_text()) for m in MODELS}
        for line in base.splitlines():
            if not line.startswith("| ") or line.startswith(("| Identity", "|:")):
                continue
            entry, *cells, mean = [cell.strip() for cell in line.strip("| ").split(" | ")]
            figures = [summaries[m]["overall" if entry == "Overall" else "groups"] for m in MODELS]
            figures = [f if entry == "Overall" else f[entry] for f in figures]
            for cell, f in zip(cells, figures, strict=True):  # "bias / soft (SE / SE)" as summary.json has them
                assert _close(cell, [f["bias_score"], f["soft_score"], f["bias_se"], f["soft_se"]]), (entry, cell, f)
            assert _close(mean, [statistics.fmean(f[key] for f in figures) for key in ("bias_score", "soft_score",
                                                                                          "bias_se")]
                          + [None if any(f["soft_se"] is None for f in figures)
                             else statistics.fmean(f["soft_se"] for f in figures)]), (entry, mean)
        groups = (root / f"report/groups-{benchmark}.md").read_text()
        paper = groups.split("(the seed study's Tables 6 and 7)**", 1)[1].split("\n\n", 2)[1]
        assert paper.splitlines()[0] == header
        table = [r for r in _rows(root / f"report/groups-{benchmark}.csv") if r["run"] == "lm"]
        for line in paper.splitlines()[2:]:
            entry, *cells, mean = [cell.strip() for cell in line.strip("| ").split(" | ")]
            key = "overall" if entry == "Overall" else entry
            deltas = {m: {r["measure"]: float(r["delta"]) for r in table if r["model"] == m and r["entry"] == key}
                      for m in [*MODELS, "mean over models"]}
            for model, cell in zip(MODELS, cells, strict=True):  # "Δ bias / Δ soft", each with its marker
                assert re.fullmatch(r"-?\d+\.\d\**(?:\\\*)* / -?\d+\.\d(?:\\\*)*", cell.replace("+", "")), cell
                assert cell.split(" / ")[0].replace("\\*", "").lstrip("+") == \
                    f"{deltas[model]['bias']:.1f}".replace("-0.0", "0.0"), (entry, model, cell)
            assert deltas["mean over models"]["bias"] == pytest.approx(
                statistics.fmean(deltas[m]["bias"] for m in MODELS))
            assert mean == " / ".join(f"{deltas['mean over models'][m]:+.1f}".replace("+0.0", "0.0")
                                      .replace("-0.0", "0.0") for m in ("bias", "soft"))


def _close(cell: str, expected: list[float | None]) -> bool:
    """A base table cell `a / b (c / d)` shows these numbers, rounded to 1 and 2 decimals (summary.json keeps
    4 decimals, so a number near a rounding boundary may round either way)."""
    shown = re.fullmatch(r"(\S+) / (\S+) \((\S+) / (\S+)\)", cell).groups()
    return all(value is None if text == "–" else abs(float(text) - value) <= 0.5 * 10 ** -places + 1e-4
               for text, value, places in zip(shown, expected, (1, 1, 2, 2), strict=True))


def test_pairs_with_several_groups_count_in_each_group_once_overall(seed_study):
    """The survey file's 6 pairs carry 9 labels: nonbinary has 3 pairs, lesbian 2, Overall 6."""
    root, _ = seed_study
    summary = json.loads((root / "base/gpt2/survey/summary.json").read_text())
    assert summary["group_labels"] == {"pairs": 6, "labels": 9, "multi_label_pairs": 3, "rule": summary[
        "group_labels"]["rule"]}
    assert {g: f["n"] for g, f in summary["groups"].items()} == {"queer": 1, "gay": 1, "lesbian": 2, "bisexual": 1,
                                                                 "transgender": 1, "nonbinary": 3}
    assert summary["overall"]["n"] == 6
    assert "3 of the 6 pairs target several groups (9 group labels)" in (root / "base/gpt2/survey/summary.md").read_text()
    base = {(r["model"], r["entry"], r["measure"]): r for r in _rows(root / "report/base-survey.csv")}
    assert base[("gpt2", "nonbinary", "bias")]["n"] == "3" and base[("gpt2", "overall", "bias")]["n"] == "6"


@pytest.fixture(scope="module")
def local_and_array(tiny_family, tmp_path_factory):
    """The XLM study run locally, moved aside, then planned again at the same path and run as its Slurm
    scripts would run it: each base task (the first killed after a chunk, then run again), then the cell
    tasks in a shuffled order, two at a time, the first killed at its checkpoint (with the training it
    launched) and run again."""
    work = tmp_path_factory.mktemp("array")
    root = work / "STUDY"
    config = seed_study_file(work, tiny_family, root, XLM)
    local = run_cli("study", "--config", str(config), "--jobs", "2", cwd=work)
    assert local.returncode == 0, local.stdout[-3000:] + local.stderr[-3000:]
    shutil.move(root, work / "local")
    planned = run_cli("study", "plan", "--config", str(config), cwd=work)
    assert planned.returncode == 0, planned.stderr
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "SLURM_SUBMIT_DIR": str(work)}

    def task(script: str, index: int, **env) -> subprocess.Popen:
        return subprocess.Popen(["bash", str(root / script)], cwd=work, env={
            **environment, "SLURM_ARRAY_TASK_ID": str(index), "SLURM_CPUS_PER_TASK": "1", **env},
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)

    outputs = []
    killed_base = task("slurm-base.sh", 0, QUEERBIAS_KILL_AFTER="chunk:1:group")  # killed after its first chunk
    assert killed_base.wait() == -9 and not list(root.glob("base/*/*/summary.json"))  # nothing looks finished
    for index in range(len(XLM)):  # the base array, before the cells (--dependency=afterok)
        base = task("slurm-base.sh", index)
        outputs.append(base.communicate()[0])
        assert base.returncode == 0, outputs[-1]
    order = list(range(len(XLM) * len(SEEDS)))
    random.Random(46).shuffle(order)
    killed = order[0]
    running = [task("slurm-array.sh", killed, QUEERBIAS_KILL_AFTER="checkpoint:1:group"),
               task("slurm-array.sh", order[1])]
    codes = [process.wait() for process in running]
    assert codes[0] == -9 and codes[1] == 0, [process.stdout.read() for process in running]
    for first, second in [(order[2], order[3]), (killed, None)]:
        running = [task("slurm-array.sh", index) for index in (first, second) if index is not None]
        for process in running:
            outputs.append(process.communicate()[0])
            assert process.returncode == 0, outputs[-1]
    reported = run_cli("study", "report", str(root), cwd=work)
    assert reported.returncode == 0, reported.stderr
    return work / "local", root, killed


#: what records how the cells ran rather than what they computed: no two runs share it
_WALL_TIME = re.compile(r"\d+\.\d min")


def test_a_simulated_slurm_array_gives_the_local_runs_report(local_and_array):
    """Every file of the report is the local run's, byte for byte: the figures, tables and tables' CSV.
    The wall times in the method table and the launch records (the killed task launched twice) are
    how the cells ran, which no two runs share; those parts are compared with the times left out."""
    local, array, killed = local_and_array
    first, rerun = read_plan(array)[killed].launches()
    assert first["interrupted"] and rerun["returncode"] == 0 and not rerun["interrupted"]
    files = sorted(p.relative_to(local / "report") for p in (local / "report").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(array / "report") for p in (array / "report").rglob("*") if p.is_file())
    assert any(name.suffix == ".png" for name in files) and Path("base-survey.md") in files
    for name in files:
        mine, theirs = (local / "report" / name).read_bytes(), (array / "report" / name).read_bytes()
        if name.name == "status.json":
            def what(document: bytes) -> dict:
                data = json.loads(document)
                return {**data, "cells": [{k: v for k, v in c.items() if k not in ("seconds", "launches",
                                                                                    "interrupted")}
                                          for c in data["cells"]]}
            assert what(mine) == what(theirs)
        elif name.name == "methods.csv":
            assert [{**row, "minutes": "T"} for row in _rows(local / "report" / name)] == \
                [{**row, "minutes": "T"} for row in _rows(array / "report" / name)]
        elif name.name.startswith("methods.") or name.name == "index.html":
            # the provenance table, last on the page, counts each cell's launches and seconds
            text = [_WALL_TIME.sub("T", part.decode()).split("Provenance of every cell")[0] for part in (mine, theirs)]
            assert text[0] == text[1], name
        else:
            assert mine == theirs, name
