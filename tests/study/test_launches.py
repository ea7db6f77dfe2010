"""A study killed while a cell trains (the study and its training together, as ending a job does)
reports the launch it lost: recorded when it started, reported "started, not finished" with its
time up to its last output, and counted once the study is resumed."""

from __future__ import annotations

import json
import re

from queerbias.cli import main
from queerbias.study.cells import read_plan

from .helpers import BENCHMARKS, TRAINING, run_cli, study_config, write_study


def test_a_killed_and_resumed_study_reports_the_killed_launch(tiny_gpt2, tmp_path):
    root = tmp_path / "STUDY"
    config = write_study(tmp_path / "study.yaml", study_config(
        root, {"gpt2": str(tiny_gpt2)}, seeds=[0], runs={"lm": {"overrides": {"objective": "lm"}}},
        training={"overrides": {**TRAINING, "eval_every": 1}}, benchmarks=BENCHMARKS[:1]))
    # the cell's training ends its process group at its first complete checkpoint: the study dies with it
    killed = run_cli("study", "--config", str(config), cwd=tmp_path, env={"QUEERBIAS_KILL_AFTER": "checkpoint:1:group"})
    assert killed.returncode == -9, killed.stderr[-2000:]
    cell, = read_plan(root)
    launch, = cell.launches()
    assert launch["interrupted"] and launch["returncode"] is None and launch["seconds"] > 0
    assert (cell.folder / "checkpoint-1").is_dir() and not cell.finished()

    assert main(["study", "report", str(root)]) == 0
    status = json.loads((root / "report/status.json").read_text())
    assert status["complete"] is False
    line, = status["missing"]
    assert re.fullmatch(r"gpt2/lm/seed-0: started, not finished \(resume: run the study again\); 1 launch, "
                        r"1 interrupted \(\d+ s so far\)", line), line
    assert status["cells"][0]["launches"] == 1 and status["cells"][0]["interrupted"] == 1

    resumed = run_cli("study", "--config", str(config), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    first, second = cell.launches()
    assert first["launch"] == launch["launch"] and first["interrupted"] and first["seconds"] == launch["seconds"]
    assert second["returncode"] == 0 and not second["interrupted"]
    status = json.loads((root / "report/status.json").read_text())
    assert status["complete"] is True and status["cells"][0]["launches"] == 2
    assert status["cells"][0]["seconds"] == first["seconds"] + second["seconds"]  # the time per cell counts both
    assert "2 (1 interrupted)" in (root / "report/index.html").read_text()

