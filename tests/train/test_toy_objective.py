"""A new objective is one folder plus one registry entry: the toy objective's section is a typed
config key, it trains end to end on a tiny model, and the card describes it."""

from __future__ import annotations

import pytest
from huggingface_hub import ModelCard

from queerbias.errors import QueerbiasError
from queerbias.train.config import config_from_dict
from queerbias.train.objectives import registry
from queerbias.train.runner import run_training

from .helpers import small_config


@pytest.fixture
def registered(monkeypatch):
    """The one registry entry (in the package: a line in train/objectives/registry.py)."""
    monkeypatch.setitem(registry.REGISTRY, "toy", "train.toy_objective.objective:ToyObjective")


def test_toy_objective_trains_and_is_described_on_the_card(registered, tiny_gpt2, tmp_path):
    config = config_from_dict(small_config(tiny_gpt2, tmp_path / "run", objective="toy", toy__repeat=3,
                                           max_steps=2, eval_every=2))
    from train.toy_objective.config import ToyConfig

    assert (config.section(ToyConfig).repeat, config.section(ToyConfig).smoothing) == (3, 0.1)
    result = run_training(config)
    corpus = result["metrics"][0]["corpus"]
    assert corpus["toy"] == {"repeat": 3} and corpus["training_documents"] == 3 * corpus["documents"]
    assert [m["step"] for m in result["metrics"]] == [0, 2]
    card = ModelCard.load(result["final"] / "README.md")
    assert "toy-objective" in card.data.tags
    assert "- Objective: `toy`: language modelling on a corpus whose documents are repeated" in card.text
    assert "- `toy`: repeat 3, smoothing 0.1" in card.text


@pytest.mark.parametrize(("overrides", "message"), [
    ({"toy__repeat": 0}, "config key 'toy.repeat' must be at least 1, got 0"),
    ({"toy__smoothing": float("nan")}, "config key 'toy.smoothing' must be a (finite) number"),
    ({"method": "full"}, "config key 'method' must be lora for objective toy"),
])
def test_toy_objective_settings_are_checked_like_every_key(registered, tmp_path, overrides, message):
    with pytest.raises(QueerbiasError, match=message.replace("(", r"\(").replace(")", r"\)")):
        config_from_dict(small_config("no-model-needed", tmp_path / "run", objective="toy", **overrides))


def test_an_unregistered_objective_is_refused(tmp_path):
    with pytest.raises(QueerbiasError, match="config key 'objective' must be one of lm, cda, equalise, dpo"):
        config_from_dict(small_config("no-model-needed", tmp_path / "run", objective="toy"))
