"""Tiny studies for the tests: two tiny models, objectives lm and equalise, two seeds, a few steps."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
DEMO_CORPUS = REPO / "corpora" / "demo"
#: every cell: LoRA, 2 optimizer steps, one checkpoint, 12 held-out pairs, 50 bootstrap resamples
TRAINING = {
    "method": "lora", "max_steps": 2, "eval_every": 2, "examples_per_device": 2, "learning_rate": 0.02,
    "logging_steps": 1, "threads": 1,
    "data": {"train": str(DEMO_CORPUS), "max_length": 48, "max_validation_docs": 2},
    "eval": {"general_perplexity": False},
    "compare": {"resamples": 50},
}
BENCHMARKS = [
    {"suite": "pairs", "data": "queerbias-de:test", "sample": 12, "name": "bias"},
    {"suite": "knowledge", "data": "queerbias-knowledge", "sample": 12, "name": "knowledge"},
    # never on the machine: skipped by every cell, and the report says so
    {"suite": "pairs", "data": "no-such-pairs.csv", "name": "absent", "optional": True},
]


def study_config(out: Path, models: dict, **changes) -> dict:
    return {
        "output_dir": str(out),
        "models": models,
        "runs": {"lm": {"overrides": {"objective": "lm"}},
                 "equalise": {"overrides": {"objective": "equalise",
                                            "pairs": {"train": "queerbias-de:train"},
                                            "equalise": {"pairs_per_batch": 4}}}},
        "seeds": [0, 1],
        "training": {"overrides": TRAINING},
        "benchmarks": BENCHMARKS,
        **changes,
    }


def write_study(path: Path, config: dict) -> Path:
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def run_cli(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """`queerbias ARGS` in its own process and process group (the stop hook ends that process as a
    kill would; a kill point of scope `group` ends it with every process it started)."""
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1",
                   **(env or {})}
    return subprocess.run([sys.executable, "-m", "queerbias.cli", *args], cwd=cwd, env=environment,
                          capture_output=True, text=True, check=False, start_new_session=True)


def once_per_session(request, tmp_path_factory, name: str, build: Callable[[Path, Path], dict]) -> dict:
    """`build(folder, shared)`'s JSON record, built once per test session however many pytest-xdist workers
    ask: the first runs it under a file lock in the session's shared temporary folder (`shared`, the folder
    above every worker's own) and records it there; a worker that asks meanwhile waits on the lock and reads
    the record. A study that two workers each ran would cost its minutes twice."""
    shared = tmp_path_factory.getbasetemp()
    if hasattr(request.config, "workerinput"):  # an xdist worker (xdist's worker_id, without needing xdist)
        shared = shared.parent
    with open(shared / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        record = shared / f"{name}.json"
        if not record.is_file():
            record.write_text(json.dumps(build(tmp_path_factory.mktemp(name), shared)))
    return json.loads(record.read_text())


def completed_to_json(done: subprocess.CompletedProcess) -> dict:
    return {"args": done.args, "returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
