"""The study the tests share: 2 tiny models × lm and equalise × 2 seeds, killed after 3 cells and resumed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from .helpers import run_cli, study_config, write_study

STOPPED_AFTER = 3


@dataclass
class FinishedStudy:
    config: Path
    root: Path
    killed: object  # the CompletedProcess of the run the stop hook ended
    resumed: object
    killed_finished: list[str]  # the cells finished when the first run was killed


@pytest.fixture(scope="session")
def finished_study(tiny_bert, tiny_gpt2, tmp_path_factory) -> FinishedStudy:
    work = tmp_path_factory.mktemp("study")
    root = work / "STUDY"
    config = write_study(work / "study.yaml", study_config(root, {"bert": str(tiny_bert), "gpt2": str(tiny_gpt2)}))
    killed = run_cli("study", "--config", str(config), "--jobs", "2", cwd=work,
                     env={"QUEERBIAS_STUDY_STOP_AFTER": str(STOPPED_AFTER)})
    finished = sorted(str(p.parents[1].relative_to(root / "runs")) for p in root.glob("runs/*/*/*/final/README.md"))
    report_after_kill = (root / "report").exists()
    resumed = run_cli("study", "--config", str(config), "--jobs", "2", cwd=work)
    assert not report_after_kill, "a killed study must leave no report"
    return FinishedStudy(config, root, killed, resumed, finished)
