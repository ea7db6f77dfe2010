"""The embedded Gemma 3 270M with LoRA for two steps, trained in bf16, scored in fp32."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from huggingface_hub import ModelCard

from queerbias.suites.pairs.declaration import PairSettings
from queerbias.suites.pairs.suite import PairsSuite
from queerbias.suites.store import run_to_dir
from queerbias.train.config import config_from_dict
from queerbias.train.runner import run_training

from .helpers import small_config


@pytest.mark.slow
def test_gemma_lora_two_steps(tmp_path):
    config = config_from_dict(small_config(
        "embedded:gemma-3-270m", tmp_path / "run", max_steps=2, eval_every=2, batch_size=2,
        precision="bf16", data__max_length=48, data__max_train_docs=4,
        data__max_validation_docs=2, eval__benchmarks=[{"suite": "pairs", "sample": 4}]))
    result = run_training(config)
    assert [m["step"] for m in result["metrics"]] == [0, 2]
    folder = tmp_path / "run" / "checkpoint-2"
    assert (folder / "queerbias-complete").is_file()
    config_json = json.loads((folder / "adapter_config.json").read_text())
    assert {"q_proj", "v_proj", "down_proj"} <= set(config_json["target_modules"])
    # scored in float32 although trained under bf16 autocast: a fresh fp32 load agrees
    fresh = run_to_dir(PairsSuite(), str(folder), "queerbias-de", tmp_path / "fresh", PairSettings(sample=4),
                       progress=False)
    a = pd.read_csv(folder / "bias" / "pairs.csv")
    b = pd.read_csv(tmp_path / "fresh" / "pairs.csv")
    assert (a["score_more"] - b["score_more"]).abs().max() < 1e-3
    assert fresh["overall"]["bias_score"] == result["metrics"][-1]["benchmarks"]["bias"]["overall"]
    # the card names the upstream Hub model and its licence, and says the base was the dequantized GGUF
    card = ModelCard.load(tmp_path / "run" / "final" / "README.md")
    assert (card.data.base_model, card.data.license, card.data.base_model_relation) == (
        "google/gemma-3-270m", "gemma", "adapter")
    assert "Q4_K_M" in card.text and "not the original weights" in card.text
