"""A study killed while a cell trains (the study and its training together, as ending a job does)
reports the launch it lost: recorded when it started, reported "started, not finished" with its
time up to its last output, and counted once the study is resumed."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import pytest

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



def test_a_card_written_into_a_killed_cell_does_not_finish_it(tmp_path, capsys):
    """After a study's training was killed, `queerbias card` on the cell wrote final/README.md, and the
    study then said "finished earlier, skipped" for ever: only the study's own mark finishes a cell."""
    from queerbias.study.cells import prepare
    from queerbias.study.config import load_study

    config = write_study(tmp_path / "study.yaml", study_config(
        tmp_path / "STUDY", {"gpt2": "some/model"}, seeds=[0], runs={"lm": {"overrides": {"objective": "lm"}}},
        training={"overrides": TRAINING}, benchmarks=BENCHMARKS[:1]))
    cell, = prepare(load_study(config))
    (cell.folder / "final").mkdir()
    (cell.folder / "final" / "adapter_config.json").write_text("{}")  # killed after the final save
    (cell.folder / "config.yaml").write_text("model: some/model\n")
    assert main(["card", str(cell.folder)]) == 0  # what a user may run on the cell
    assert (cell.folder / "final" / "README.md").is_file()
    assert not cell.finished()
    assert main(["study", "report", str(tmp_path / "STUDY")]) == 0
    status = json.loads((tmp_path / "STUDY" / "report" / "status.json").read_text())
    assert status["complete"] is False and status["missing"][0].startswith("gpt2/lm/seed-0: started, not finished")


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_the_study_ends_its_training_and_records_the_launch_interrupted(stop, tiny_gpt2, tmp_path):
    """SIGTERM (a job's end) or SIGINT (Ctrl-C) to `queerbias study` left its training running. The
    training pauses at its first progress chunk (`QUEERBIAS_PAUSE_AT`, a FIFO the test holds open), the
    study gets the signal there: the training ends (the FIFO loses its reader), the launch is recorded
    interrupted, the study exits 128 + the signal with one line and writes no report."""
    root, fifo = tmp_path / "STUDY", tmp_path / "pause"
    os.mkfifo(fifo)
    config = write_study(tmp_path / "study.yaml", study_config(
        root, {"gpt2": str(tiny_gpt2)}, seeds=[0], runs={"lm": {"overrides": {"objective": "lm"}}},
        training={"overrides": TRAINING}, benchmarks=BENCHMARKS[:1]))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1",
           "QUEERBIAS_PAUSE_AT": f"chunk:1:{fifo}"}
    study = subprocess.Popen([sys.executable, "-m", "queerbias.cli", "study", "--config", str(config)], cwd=tmp_path,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        with open(fifo, "wb", buffering=0) as pause:  # returns once the training reached the point and opened it
            study.send_signal(stop)
            _, stderr = study.communicate(timeout=120)
            with pytest.raises(BrokenPipeError):  # the training, its only reader, has ended
                pause.write(b"x")
    finally:
        if study.poll() is None:
            os.killpg(study.pid, signal.SIGKILL)
    assert study.returncode == 128 + stop, stderr[-2000:]
    errors = [line for line in stderr.splitlines() if "error" in line]
    assert errors == [f"queerbias study: error: interrupted by {signal.Signals(stop).name}: the running work was "
                      "ended and recorded as interrupted; run the same command again to resume"], stderr[-2000:]
    cell, = read_plan(root)
    launch, = cell.launches()
    assert launch["interrupted"] and launch["returncode"] is not None and not cell.finished()
    assert not (root / "report").exists()
