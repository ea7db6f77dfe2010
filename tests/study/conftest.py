"""The study the tests share: 2 tiny models × lm and equalise × 2 seeds, killed after 3 cells and resumed.

It runs once per test session, however many pytest-xdist workers there are: the first worker
to need it runs it under a file lock in the session's shared temporary folder and records it
there; a worker that asks meanwhile waits on the lock and reads the record. Tests copy the
folder under a shared lock (`FinishedStudy.copy`); the one test that rewrites files in it
(`study plan`) holds the lock exclusively (`FinishedStudy.rewriting`).
"""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from .helpers import completed_to_json, once_per_session, run_cli, study_config, write_study

STOPPED_AFTER = 3


@dataclass
class FinishedStudy:
    config: Path
    root: Path
    killed: subprocess.CompletedProcess  # the run the stop hook ended
    resumed: subprocess.CompletedProcess
    killed_finished: list[str]  # the cells finished when the first run was killed
    lock: Path

    def copy(self, to: Path) -> Path:
        """A copy of the study folder at `to`, made while no test rewrites it."""
        with self._held(fcntl.LOCK_SH):
            shutil.copytree(self.root, to)
        return to

    @contextlib.contextmanager
    def rewriting(self):
        """Hold the study folder alone: no copy is made while the block rewrites its files."""
        with self._held(fcntl.LOCK_EX):
            yield self.root

    @contextlib.contextmanager
    def _held(self, mode: int):
        with open(self.lock, "a") as handle:
            fcntl.flock(handle, mode)
            yield


@pytest.fixture(scope="session")
def finished_study(tiny_bert, tiny_gpt2, tmp_path_factory, request) -> FinishedStudy:
    def run(work: Path, shared: Path) -> dict:
        return _to_json(_run_study(work, tiny_bert, tiny_gpt2, shared / "study-folder.lock"))

    return _from_json(once_per_session(request, tmp_path_factory, "finished-study", run))


def _run_study(work: Path, tiny_bert: Path, tiny_gpt2: Path, lock: Path) -> FinishedStudy:
    root = work / "STUDY"
    config = write_study(work / "study.yaml", study_config(root, {"bert": str(tiny_bert), "gpt2": str(tiny_gpt2)}))
    killed = run_cli("study", "--config", str(config), "--jobs", "2", cwd=work,
                     env={"QUEERBIAS_STUDY_STOP_AFTER": str(STOPPED_AFTER)})
    finished = sorted(str(p.parents[1].relative_to(root / "runs")) for p in root.glob("runs/*/*/*/final/README.md"))
    report_after_kill = (root / "report").exists()
    resumed = run_cli("study", "--config", str(config), "--jobs", "2", cwd=work)
    assert not report_after_kill, "a killed study must leave no report"
    return FinishedStudy(config, root, killed, resumed, finished, lock)


def _to_json(study: FinishedStudy) -> dict:
    return {"config": str(study.config), "root": str(study.root), "killed": completed_to_json(study.killed),
            "resumed": completed_to_json(study.resumed), "killed_finished": study.killed_finished,
            "lock": str(study.lock)}


def _from_json(data: dict) -> FinishedStudy:
    def run(fields: dict) -> subprocess.CompletedProcess:
        return subprocess.CompletedProcess(**fields)

    return FinishedStudy(Path(data["config"]), Path(data["root"]), run(data["killed"]), run(data["resumed"]),
                         data["killed_finished"], Path(data["lock"]))
