"""The gradient-accumulation loss guard: BertForMaskedLM ignores num_items_in_batch."""

from __future__ import annotations

import math

from queerbias.models import load_model
from queerbias.train.config import config_from_dict
from queerbias.train.modeling import honours_num_items_in_batch
from queerbias.train.runner import run_training

from .helpers import TINY_BENCHMARK, logged_losses, small_config


def test_probe_tells_models_apart(tiny_bert, tiny_llama, tiny_gpt2):
    assert not honours_num_items_in_batch(load_model(str(tiny_bert)).model)
    assert honours_num_items_in_batch(load_model(str(tiny_llama)).model)
    assert honours_num_items_in_batch(load_model(str(tiny_gpt2)).model)


def test_bert_loss_not_multiplied_by_accumulation(tiny_bert, tmp_path):
    """Random BERT's MLM loss is about ln(vocab); unguarded, the trainer would report and
    back-propagate it multiplied by the 4 accumulation steps."""
    config = config_from_dict(small_config(
        tiny_bert, tmp_path / "run", method="full", max_steps=1, eval_every=1, grad_accum=4,
        examples_per_device=2, learning_rate=1e-6, eval__benchmarks=TINY_BENCHMARK, eval__perplexity=False))
    run_training(config)
    vocab = load_model(str(tiny_bert)).model.config.vocab_size
    (loss,) = logged_losses(tmp_path / "run" / "checkpoint-1")
    assert abs(loss - math.log(vocab)) < 1.0, loss
