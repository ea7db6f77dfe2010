"""Helpers for the training tests: small configs on the shipped demo corpus."""

from __future__ import annotations

import json
from pathlib import Path

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
        "batch_size": 4,
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
