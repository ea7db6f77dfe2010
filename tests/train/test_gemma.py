"""The embedded Gemma 3 270M with LoRA for two steps: its adapter targets and its model card.

In fp32: bf16 autocast on a CPU without bf16 instructions makes each backward pass take about
a minute; training under bf16 and scoring in fp32 is tested on the tiny Gemma
(tests/train/test_precision.py)."""

from __future__ import annotations

import json

import pytest
from huggingface_hub import ModelCard

from queerbias.train.config import config_from_dict
from queerbias.train.runner import run_training

from .helpers import assert_checkpoint_scores_as_a_fresh_load, small_config


@pytest.mark.slow
def test_gemma_lora_two_steps(tmp_path):
    config = config_from_dict(small_config(
        "embedded:gemma-3-270m", tmp_path / "run", max_steps=2, eval_every=2, examples_per_device=2,
        precision="fp32", data__max_length=48, data__max_train_docs=4,
        data__max_validation_docs=2, eval__benchmarks=[{"suite": "pairs", "sample": 4}],
        eval__general_perplexity=False))
    result = run_training(config)
    assert [m["step"] for m in result["metrics"]] == [0, 2]
    folder = tmp_path / "run" / "checkpoint-2"
    assert (folder / "queerbias-complete").is_file()
    config_json = json.loads((folder / "adapter_config.json").read_text())
    assert {"q_proj", "v_proj", "down_proj"} <= set(config_json["target_modules"])
    assert_checkpoint_scores_as_a_fresh_load(folder, tmp_path / "fresh", result)
    # the card names the upstream Hub model and its licence, and says the base was the dequantized GGUF
    card = ModelCard.load(tmp_path / "run" / "final" / "README.md")
    assert (card.data.base_model, card.data.license, card.data.base_model_relation) == (
        "google/gemma-3-270m", "gemma", "adapter")
    assert "Q4_K_M" in card.text and "not the original weights" in card.text
