"""A 2 models × 2 objectives × 2 seeds study on tiny models, end to end: killed after 3 cells and
resumed, every cell run once, the tables equal to a hand aggregation of the cells' files, the
plan and Slurm script listing every cell, and the report opening in headless Chromium."""

from __future__ import annotations

import csv
import json
import os
import shlex
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from queerbias.cli import main
from queerbias.report.tables import fmt

from .browser import CHROMIUM, check_page
from .conftest import STOPPED_AFTER
from .helpers import run_cli

CELLS = [f"{m}/{r}/seed-{s}" for m in ("bert", "gpt2") for s in (0, 1) for r in ("lm", "equalise")]  # plan order


def _rows(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _number(text: str) -> float | None:
    return None if text == "" else float(text)


def test_a_killed_study_resumes_and_runs_every_cell_exactly_once(finished_study):
    assert finished_study.killed.returncode == -9, finished_study.killed.stderr
    assert finished_study.killed_finished == sorted(CELLS[:STOPPED_AFTER])  # plan order, 2 side by side
    assert finished_study.resumed.returncode == 0, finished_study.resumed.stderr
    out = finished_study.resumed.stdout
    threads = str(max(1, len(os.sched_getaffinity(0)) // 2))  # --jobs 2 splits the cores
    for name in CELLS[:STOPPED_AFTER]:
        assert f"{name}: finished earlier, skipped" in out
    for name in CELLS:
        lines = (finished_study.root / "runs" / name / "study-cell-launches.jsonl").read_text().splitlines()
        start, end = map(json.loads, lines)  # launched once over both runs of the study: its start, its end
        assert start["launch"] == end["launch"] and end["returncode"] == 0, name
        assert start["versions"]["queerbias"] and start["threads"] == threads and start["command"]
    assert "study complete" in out
    # base models scored once per model: the other cells of a model adopted the shared evaluation
    for model in ("bert", "gpt2"):
        metas = [json.loads((finished_study.root / "runs" / name / "base/bias/summary.json").read_text())["meta"]
                 for name in CELLS if name.startswith(model)]
        assert sum("shared_base" not in meta for meta in metas) == 1
        assert len({meta["run_key"] for meta in metas}) == 1
        assert all(meta["run"].endswith(name) for meta, name in zip(metas, [c for c in CELLS if c.startswith(model)],
                                                                     strict=True))


def test_group_table_equals_a_hand_aggregation_of_the_cells(finished_study):
    root = finished_study.root
    rows = [r for r in _rows(root / "report/groups-bias.csv") if r["scope"] == "groups"]
    table = [r for r in rows if r["model"] != "mean over models"]
    assert {(r["run"], r["model"]) for r in table} == {(r, m) for r in ("lm", "equalise") for m in ("bert", "gpt2")}
    for mean in (r for r in rows if r["model"] == "mean over models"):  # the paper's Mean column
        models = [r for r in table if (r["run"], r["entry"], r["measure"]) == (mean["run"], mean["entry"],
                                                                              mean["measure"])]
        for part in ("before", "after", "delta"):
            assert _number(mean[part]) == pytest.approx(np.mean([_number(r[part]) for r in models]))
    for run in ("lm", "equalise"):
        for model in ("bert", "gpt2"):
            cells = [root / "runs" / model / run / f"seed-{s}" for s in (0, 1)]
            lasts = [json.loads((c / "compare/bias/delta.json").read_text())["comparisons"][-1] for c in cells]
            mine = [r for r in table if r["run"] == run and r["model"] == model]
            for measure in ("bias", "soft"):
                rows = {r["entry"]: r for r in mine if r["measure"] == measure}
                assert set(rows) == set(lasts[0]["groups"]) | {"overall"}
                pooled = _hand_pooled(cells, measure)
                groups = [g for g in lasts[0]["groups"]]
                holm = dict(zip(groups, _holm([pooled[g] for g in groups]), strict=True))
                for entry, row in rows.items():
                    seeds = [c["overall"] if entry == "overall" else c["groups"][entry] for c in lasts]
                    deltas = [s[f"{measure}_after"] - s[f"{measure}_before"] for s in seeds]
                    assert _number(row["before"]) == pytest.approx(seeds[0][f"{measure}_before"])
                    assert _number(row["after"]) == pytest.approx(np.mean([s[f"{measure}_after"] for s in seeds]))
                    assert _number(row["delta"]) == pytest.approx(np.mean(deltas))
                    assert row["spread"] == "range"
                    assert _number(row["spread_low"]) == pytest.approx(min(deltas))
                    assert _number(row["spread_high"]) == pytest.approx(max(deltas))
                    assert _number(row["ci_low"]) == pytest.approx(np.mean([s[f"ci_{measure}"][0] for s in seeds]))
                    assert _number(row["ci_high"]) == pytest.approx(np.mean([s[f"ci_{measure}"][1] for s in seeds]))
                    assert _number(row["p_pooled"]) == pytest.approx(pooled[entry])
                    adjusted = pooled[entry] if entry == "overall" else holm[entry]
                    assert _number(row["p_holm"]) == pytest.approx(adjusted)
                    agree = all(d > 0 for d in deltas) or all(d < 0 for d in deltas)
                    expected = "" if not agree else "***" if adjusted < .001 else "**" if adjusted < .01 else \
                        "*" if adjusted < .05 else ""
                    assert row["marker"] == expected


def _hand_pooled(cells, measure: str) -> dict[str, float]:
    """Per group and overall: the mean over seeds of each pair's value after, against before."""
    column = "biased" if measure == "bias" else "soft"
    base = pd.read_csv(cells[0] / "base/bias/pairs.csv").set_index("pair_id")
    afters = []
    for cell in cells:
        step = json.loads((cell / "compare/bias/delta.json").read_text())["comparisons"][-1]["after"]["step"]
        afters.append(pd.read_csv(cell / f"checkpoint-{step}/bias/pairs.csv").set_index("pair_id")[column])
    mean_after = pd.concat(afters, axis=1).mean(axis=1).loc[base.index]
    result = {}
    for name, index in [("overall", base.index), *base.groupby("group").groups.items()]:
        before, after = base.loc[index, column].astype(float), mean_after.loc[index]
        if measure == "bias":
            positive, negative = int((after > before).sum()), int((after < before).sum())
            result[name] = 1.0 if positive + negative == 0 else stats.binomtest(positive, positive + negative).pvalue
        else:
            result[name] = 1.0 if not (after - before).any() else stats.wilcoxon(after, before).pvalue
    return result


def _holm(pvalues: list[float]) -> list[float]:
    order = np.argsort(pvalues, kind="stable")
    m, adjusted, running = len(pvalues), [0.0] * len(pvalues), 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[index]))
        adjusted[index] = running
    return adjusted


def test_method_table_reads_every_comparison_figure_and_the_metrics(finished_study):
    root = finished_study.root
    rows = _rows(root / "report/methods.csv")
    figures = {r["figure"] for r in rows}
    assert {"bias:distance:bias", "bias:distance:soft", "bias:pair_gap:abs_d", "bias:direction:excess",
            "bias:direction:crossed", "knowledge:overall:accuracy", "knowledge:overall:margin",
            "knowledge:pair_gap:abs_d", "general_perplexity", "perplexity"} <= figures
    assert not any(f.startswith("bias:overall:") for f in figures)  # pairs: the distance is the headline
    for row in rows:
        cells = [root / "runs" / row["model"] / row["run"] / f"seed-{s}" for s in (0, 1)]
        if row["figure"].count(":") == 2:
            benchmark, figure, measure = row["figure"].split(":")
            seeds = [json.loads((c / f"compare/{benchmark}/delta.json").read_text())["comparisons"][-1][figure]
                     for c in cells]
            if isinstance(seeds[0].get(measure), list):  # names: each with the seeds that named it
                counts = {name: sum(name in s[measure] for s in seeds) for s in seeds for name in s[measure]}
                assert row["names"] == (", ".join(f"{n} ({k}/2 seeds)" for n, k in
                                                  sorted(counts.items(), key=lambda i: (-i[1], i[0]))) or "none")
                continue
            assert _number(row["before"]) == pytest.approx(seeds[0][f"{measure}_before"])
            assert _number(row["after"]) == pytest.approx(np.mean([s[f"{measure}_after"] for s in seeds]))
            assert _number(row["delta"]) == pytest.approx(np.mean([s[f"delta_{measure}"] for s in seeds]))
            assert _number(row["ci_low"]) == pytest.approx(np.mean([s[f"ci_{measure}"][0] for s in seeds]))
        elif row["figure"] == "perplexity":
            metrics = [[json.loads(line) for line in (c / "metrics.jsonl").read_text().splitlines()] for c in cells]
            assert _number(row["before"]) == pytest.approx(np.mean([m[0]["perplexity"] for m in metrics]))
            assert _number(row["after"]) == pytest.approx(np.mean([m[-1]["perplexity"] for m in metrics]))
            launches = [sum(json.loads(line).get("seconds", 0) for line in
                            (c / "study-cell-launches.jsonl").read_text().splitlines()) for c in cells]
            assert _number(row["minutes"]) == pytest.approx(np.mean(launches) / 60)
        else:  # general perplexity is switched off in these cells: no figure, never a made-up one
            assert row["before"] == "" and row["missing"] == ""
    text = (root / "report/methods.md").read_text()
    assert "INCOMPLETE" not in text and "| lm (2 steps) | bert |" in text
    assert "skipped by every cell" in (root / "report/groups-absent.md").read_text()
    assert (root / "report/methods.tex").read_text().count(r"\begin{tabular}") == 2  # summary, full


def test_a_new_comparison_figure_appears_in_the_method_table_without_code(finished_study, tmp_path):
    """Issue 20's figures (pair-level indifference, stereotype excess, ...) are read by their shape; and
    (on the same copy, to build one report) a cell folder the study file no longer has is named, not used."""
    root = finished_study.copy(tmp_path / "STUDY")
    shutil.copytree(root / "runs/bert/lm/seed-1", root / "runs/bert/lm/seed-7")  # a seed dropped from the file
    for delta in root.glob("runs/*/*/*/compare/bias/delta.json"):
        document = json.loads(delta.read_text())
        document["comparisons"][-1]["excess"] = {"excess_before": 4.0, "excess_after": 1.0, "delta_excess": -3.0,
                                                 "ci_excess": [-4.0, -2.0], "p_excess": 0.01}
        delta.write_text(json.dumps(document))
    assert main(["study", "report", str(root)]) == 0
    rows = [r for r in _rows(root / "report/methods.csv") if r["figure"] == "bias:excess:excess"]
    assert len(rows) == 4 and all(r["delta"] == "-3.0" and r["every_seed_significant"] == "True" for r in rows)
    assert "bias: excess (excess)" in (root / "report/methods.md").read_text()
    note = ("1 cell folder(s) in this STUDY are not in its study file (seeds, runs or models dropped from it) and "
            "are not reported: runs/bert/lm/seed-7")
    assert note in (root / "report/methods.md").read_text() and note in (root / "report/index.html").read_text()
    assert "seed-7" not in (root / "report/methods.csv").read_text()


def test_the_slurm_array_runs_each_cell_as_the_study_does(finished_study, tmp_path, capsys, monkeypatch):
    """One launcher: plan.json, `study plan`'s printed commands and what the local study ran (each
    cell's log) are the same argv; the array's tasks are `study cell`; every hint is shell-quoted."""
    monkeypatch.chdir(finished_study.config.parent)
    slurm = tmp_path / "the array's script.sh"  # a space and a quote: the printed hint must quote them
    with finished_study.rewriting():  # plan.json, study.yaml and the cells' configs again, as they were
        assert main(["study", "plan", "--config", str(finished_study.config), "--slurm-out", str(slurm)]) == 0
    printed = capsys.readouterr().out.splitlines()
    planned = json.loads((finished_study.root / "plan.json").read_text())["cells"]
    assert [shlex.split(line) for line in printed[:-1]] == [cell["command"] for cell in planned]
    submit = finished_study.root / "slurm-submit.sh"
    assert printed[-1] == (f"Slurm ({len(CELLS)} cells): first, where the network is: queerbias study prefetch "
                           f"{shlex.quote(str(finished_study.root))}; then, from this folder: bash "
                           f"{shlex.quote(str(submit))}")
    for cell, name in zip(planned, CELLS, strict=True):
        ran = (finished_study.root / "runs" / name / "study-cell.log").read_text().splitlines()[0]
        assert shlex.split(ran.split(": ", 1)[1]) == cell["command"], name  # the local run ran the plan's command
        assert cell["command"][1:4] == ["-m", "queerbias.cli", "train"]  # one process, as `queerbias train`
    script = slurm.read_text()
    assert f"#SBATCH --array=0-{len(CELLS) - 1}" in script
    assert all(f"#   {index}: {name}" in script for index, name in enumerate(CELLS))
    base = (finished_study.root / "slurm-base.sh").read_text()
    assert "#SBATCH --array=0-1" in base and "#   0: bert" in base and "#   1: gpt2" in base
    submitted = submit.read_text()  # the cell array after the base array, both found beside the submit script
    assert 'base=$(sbatch --parsable "$here/slurm-base.sh")' in submitted
    assert f'--dependency=afterok:"${{base%%;*}}" "$here/"{shlex.quote(os.path.relpath(slurm, submit.parent))}' \
        in submitted
    for path in (slurm, finished_study.root / "slurm-base.sh", submit):
        assert subprocess.run(["bash", "-n", str(path)], check=False).returncode == 0
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "SLURM_CPUS_PER_TASK": "3"}
    env.pop("OMP_NUM_THREADS", None)
    done = subprocess.run(["bash", str(slurm)], env={**env, "SLURM_ARRAY_TASK_ID": "1"}, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0 and f"{CELLS[1]}: finished earlier, skipped" in done.stdout, done.stderr
    based = subprocess.run(["bash", str(finished_study.root / "slurm-base.sh")],
                           env={**env, "SLURM_ARRAY_TASK_ID": "0"}, capture_output=True, text=True, check=False)
    assert based.returncode == 0 and based.stdout.endswith("/base/bert: published earlier, skipped\n"), based.stderr
    unknown = subprocess.run(["bash", str(slurm)], env={**env, "SLURM_ARRAY_TASK_ID": "99"}, capture_output=True,
                             text=True, check=False)
    assert unknown.returncode == 2 and "no cell 99 in the study" in unknown.stderr
    # paths are resolved on the node: from another folder the task says where to submit from, in one line
    elsewhere = subprocess.run(["bash", str(slurm)], env={**env, "SLURM_ARRAY_TASK_ID": "1"}, cwd=tmp_path,
                               capture_output=True, text=True, check=False)
    assert elsewhere.returncode == 2 and elsewhere.stderr.count("\n") == 1
    assert f"submit from the folder the plan was made in ({finished_study.config.parent})" in elsewhere.stderr
    # the interpreter on the node, and threads from the allocation
    probe = tmp_path / "python"
    probe.write_text('#!/bin/bash\necho "threads=$OMP_NUM_THREADS offline=$HF_HUB_OFFLINE args=$*"\n')
    probe.chmod(0o755)
    online = {key: value for key, value in env.items() if key != "HF_HUB_OFFLINE"}
    shown = subprocess.run(["bash", str(slurm)], env={**online, "SLURM_ARRAY_TASK_ID": "2",
                                                      "QUEERBIAS_PYTHON": str(probe)},
                           capture_output=True, text=True, check=False)
    assert shown.stdout == (f"threads=3 offline=1 args=-m queerbias.cli study cell "
                            f"{os.path.relpath(finished_study.root, finished_study.config.parent)} 2\n"), shown.stderr


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_html_report_opens_in_headless_chromium(finished_study, tmp_path):
    page = finished_study.root / "report/index.html"
    shot = tmp_path / "report.png"
    check = check_page(page, shot, tmp_path / "profile")
    assert check.errors == []
    figures = sorted((finished_study.root / "report/figures").glob("*.png"))
    assert len(figures) == 11  # the first figure; per benchmark: heatmap and forest per run, one trade-off
    assert len(check.image_widths) == len(figures) and all(width > 0 for width in check.image_widths)
    assert all(url.startswith(("file:", "data:")) for url in check.requests), check.requests
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    html = page.read_text()
    assert "Provenance of every cell" in html and "Complete" in html and "sha256:" in html
    for name in CELLS:
        assert name in html


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_the_browser_check_catches_a_script_error_and_a_broken_image(tmp_path):
    page = tmp_path / "broken.html"
    page.write_text('<!doctype html><img src="data:image/png;base64,AAAA"><script>undefinedFunction();</script>')
    check = check_page(page, tmp_path / "broken.png", tmp_path / "profile")
    assert any("undefinedFunction is not defined" in error for error in check.errors)
    assert check.image_widths == [0]


def test_a_failed_cell_is_reported_and_the_report_names_it(tiny_gpt2, tmp_path):
    from .helpers import study_config, write_study

    config = study_config(tmp_path / "STUDY", {"gpt2": str(tiny_gpt2)}, seeds=[0],
                          runs={"broken": {"overrides": {"data": {"train": str(tmp_path / "no-corpus.jsonl")}}}})
    result = run_cli("study", "--config", str(write_study(tmp_path / "study.yaml", config)), cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "gpt2/broken/seed-0: failed (exit status 2): queerbias train: error:" in result.stdout
    assert "no-corpus.jsonl" in result.stdout and "study INCOMPLETE" in result.stdout
    report = tmp_path / "STUDY/report"
    status = json.loads((report / "status.json").read_text())
    assert status["complete"] is False and status["missing"][0].startswith("gpt2/broken/seed-0: failed: ")
    methods = (report / "methods.md").read_text()
    assert methods.startswith("INCOMPLETE study") and "missing: gpt2/broken/seed-0" in methods
    rows = [line for line in methods.splitlines() if line.startswith("| broken")]
    assert rows and all(row.count("missing: gpt2/broken/seed-0") == 1 for row in rows)  # once, as the verdict
    assert any("| missing | missing |" in row for row in rows)
    assert "INCOMPLETE" in (report / "index.html").read_text()
    assert (tmp_path / "STUDY/runs/gpt2/broken/seed-0/study-cell.log").read_text().count("== queerbias study") == 1


def test_verdicts_follow_a_hand_judgement_of_the_method_table(finished_study, tmp_path):
    """No rise of stereotype excess, knowledge within its guard; of the rest the lowest distance."""
    root = finished_study.copy(tmp_path / "STUDY")
    study = yaml.safe_load((root / "study.yaml").read_text())
    study["judge"] = {"guards": {"knowledge": 0.0}}
    (root / "study.yaml").write_text(yaml.safe_dump(study, sort_keys=False))  # the study's order: its plan's
    assert main(["study", "report", str(root)]) == 0
    rows = _rows(root / "report/methods.csv")
    by_run = {}
    for row in rows:
        by_run.setdefault((row["model"], row["run"]), {})[row["figure"]] = row
    expected = {}
    for key, figures in by_run.items():
        failures = []
        if float(figures["bias:direction:excess"]["delta"]) > 0:
            failures.append("stereotype excess rose on bias")
        accuracy = float(figures["knowledge:overall:accuracy"]["delta"])
        if accuracy < 0:
            failures.append(f"knowledge accuracy {accuracy:+.1f} (allowed -0)")
        distance = figures["bias:distance:bias"]
        change = ("raised" if float(distance["delta"]) > 0 else "lowered") + \
            f" bias: distance by {fmt(abs(float(distance['relative_pct'])), 1)}%"
        expected[key] = ("fails: " + "; ".join(failures) if failures else "passes" if change.startswith("lowered")
                         else f"passes every guard, but {change}")  # never chosen: it made the headline worse
    for model in ("bert", "gpt2"):
        met = [k for k in expected if k[0] == model and expected[k] == "passes"]
        if met:
            best = min(met, key=lambda k: float(by_run[k]["bias:distance:bias"]["after"]))
            expected[best] = "passes, chosen"
    assert {key: next(iter(figures.values()))["verdict"] for key, figures in by_run.items()} == expected
    assert all(len({r["verdict"] for r in figures.values()}) == 1 for figures in by_run.values())
    summary = (root / "report/methods.md").read_text().split("**Method table, summary")[1].split("**Method table:")[0]
    assert ("| run | model | bias: distance (floor) | bias: shifted towards the stereotype (frame sign test); "
            "crossed 50 towards the stereotype (descriptive) "
            "| bias: soft distance | bias: pair-level \\|d\\| | bias: stereotype excess "
            "| knowledge: overall knowledge accuracy | general perplexity | verdict |") in summary
    for (model, run), figures in by_run.items():
        distance, over = figures["bias:distance:bias"], figures["bias:distance:over"]
        relative = float(distance["relative_pct"])  # 2 seeds: no SD
        floor = float(distance["before"]) - float(over["before"])
        assert f"| {run} (2 steps) | {model} | {float(distance['before']):.2f} → {float(distance['after']):.2f} " \
               f"({fmt(relative, 1, signed=True)}%); floor {floor:.2f}, above it {float(over['before']):.2f} → " \
               f"{float(over['after']):.2f} |" in summary  # no signed zero
    assert "(of the runs that raised the stereotype excess on no benchmark, stayed within 0 of knowledge and raised " \
           "general perplexity by at most 5%, the lowest mean distance on bias (bias), if below the base's)" in \
           (root / "report/methods.md").read_text()
