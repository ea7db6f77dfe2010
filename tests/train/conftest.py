"""Fixtures of the training tests."""

from pathlib import Path

import pytest

from .helpers import DEMO_CORPUS, small_config


@pytest.fixture(scope="session")
def demo_corpus() -> Path:
    return DEMO_CORPUS


@pytest.fixture(scope="session")
def llama_run(tiny_llama, tmp_path_factory):
    """LoRA on tiny Llama: 4 steps, a checkpoint every 2, merged at the end (shared by the
    training and model-card tests, which only read it)."""
    from queerbias.train.config import config_from_dict
    from queerbias.train.runner import run_training

    out = tmp_path_factory.mktemp("llama-run") / "run"
    config = config_from_dict(small_config(tiny_llama, out, merge=True))
    return config, run_training(config)
