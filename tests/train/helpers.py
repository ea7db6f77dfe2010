"""Helpers for the training tests: small configs on the shipped demo corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[2]
DEMO_CORPUS = REPO / "corpora" / "demo"
#: where a test is about training, not evaluation: the smallest benchmark (a run needs one)
TINY_BENCHMARK = [{"suite": "pairs", "data": "queerbias-de", "sample": 2}]


def small_config(model, out: Path, **overrides) -> dict:
    """A config that trains a tiny model for a few steps and scores 20 pairs per checkpoint."""
    config = {
        "model": str(model),
        "output_dir": str(out),
        "method": "lora",
        "max_steps": 4,
        "eval_every": 2,
        "examples_per_device": 4,
        "learning_rate": 1e-3,
        "logging_steps": 1,
        "threads": 1,
        "data": {"train": str(DEMO_CORPUS), "max_length": 64, "max_validation_docs": 4},
        "eval": {"benchmarks": [{"suite": "pairs", "data": "queerbias-de", "sample": 20}]},
        "compare": {"resamples": 200},
    }
    for key, value in overrides.items():
        node = config
        *parents, last = key.split("__")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return config


def write_config(path: Path, config: dict) -> Path:
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def logged_losses(checkpoint: Path) -> list[float]:
    state = json.loads((checkpoint / "trainer_state.json").read_text())
    return [entry["loss"] for entry in state["log_history"] if "loss" in entry]


def assert_checkpoint_scores_as_a_fresh_load(checkpoint: Path, out: Path, result: dict) -> None:
    """The pairs a checkpoint was scored on during training score the same from a fresh load of it
    (in float32, whatever precision it trained in), and its summary's bias score is the run's metric."""
    from queerbias.suites.pairs.declaration import PairSettings
    from queerbias.suites.pairs.suite import PairsSuite
    from queerbias.suites.store import run_to_dir

    fresh = run_to_dir(PairsSuite(), str(checkpoint), "queerbias-de", out, PairSettings(sample=4), progress=False)
    during = pd.read_csv(checkpoint / "bias" / "pairs.csv")
    again = pd.read_csv(out / "pairs.csv")
    assert (during["score_more"] - again["score_more"]).abs().max() < 1e-3
    assert fresh["overall"]["bias_score"] == result["metrics"][-1]["benchmarks"]["bias"]["overall"]
