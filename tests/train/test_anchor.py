"""The base anchor (`equalise.anchor_term`): KL(base || model) on the language-modelling batch."""

from __future__ import annotations

import json

import pytest
import torch

from queerbias.errors import QueerbiasError
from queerbias.models import load_model
from queerbias.train.config import config_from_dict
from queerbias.train.modeling import attach_adapter
from queerbias.train.objectives.equalise.anchor import anchor_loss, base_logits
from queerbias.train.runner import run_training

from .helpers import small_config

TEXTS = ["Die Stadt baut eine neue Brücke über den Fluss.", "Morgen regnet es."]


def _adapted(path, tmp_path, scale=0.05):
    lm = load_model(str(path))
    config = config_from_dict(small_config(path, tmp_path / "x", objective="equalise",
                                           pairs__train="queerbias-de:train", equalise__anchor_term=1.0))
    model = attach_adapter(lm.model, config, lm.kind)
    with torch.no_grad():  # LoRA's B starts at 0: make the adapter change the output
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(0, scale)
    tokenizer = lm.tokenizer
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    inputs = dict(tokenizer(TEXTS, return_tensors="pt", padding=True))
    return model, inputs


@pytest.mark.parametrize("family", ["tiny_llama", "tiny_bert"])
def test_anchor_equals_a_hand_computation_against_a_fresh_base(family, request, tmp_path):
    path = request.getfixturevalue(family)
    model, inputs = _adapted(path, tmp_path, scale=1.0)
    fresh = load_model(str(path)).model.eval()  # the base, loaded again: not the adapter switched off
    model.eval()
    with torch.no_grad():
        adapted = model(**inputs).logits
        base = fresh(**inputs).logits
        assert torch.allclose(base_logits(model, inputs), base, atol=1e-5)
        expected, count = 0.0, 0
        for row in range(adapted.shape[0]):
            for position in range(adapted.shape[1]):
                if not inputs["attention_mask"][row, position]:
                    continue
                p = torch.log_softmax(base[row, position].double(), -1)
                q = torch.log_softmax(adapted[row, position].double(), -1)
                expected += float((p.exp() * (p - q)).sum())
                count += 1
        value = anchor_loss(adapted, base, inputs["attention_mask"], None).item()
    assert count < adapted.shape[0] * adapted.shape[1]  # padding was left out
    assert value == pytest.approx(expected / count, rel=1e-4) and value > 0
    assert anchor_loss(adapted, base, inputs["attention_mask"], 8).item() <= value + 1e-6  # a lower bound


def test_anchor_is_zero_for_the_untouched_adapter_and_its_gradient_reaches_the_adapter(tiny_llama, tmp_path):
    model, inputs = _adapted(tiny_llama, tmp_path, scale=0.0)
    with torch.no_grad():
        assert anchor_loss(model(**inputs).logits, base_logits(model, inputs), inputs["attention_mask"],
                           None).item() == pytest.approx(0.0, abs=1e-7)
    model, inputs = _adapted(tiny_llama, tmp_path)
    model.train()
    anchor_loss(model(**inputs).logits, base_logits(model, inputs), inputs["attention_mask"], 16).backward()
    grads = [p.grad for name, p in model.named_parameters() if "lora_A" in name]
    assert grads and all(g is not None and g.abs().sum() > 0 for g in grads)
    assert all(p.grad is None for name, p in model.named_parameters() if "lora" not in name)


def test_anchor_needs_an_adapter(tiny_llama, tmp_path):
    with pytest.raises(QueerbiasError, match="equalise.anchor_term.*needs method: lora"):
        config_from_dict(small_config(tiny_llama, tmp_path / "run", objective="equalise", method="full",
                                      pairs__train="queerbias-de:train", equalise__anchor_term=1.0))


def test_a_run_with_the_anchor_logs_it(tiny_llama, tmp_path):
    config = config_from_dict(small_config(tiny_llama, tmp_path / "run", objective="equalise", max_steps=2,
                                           eval_every=2, pairs__train="queerbias-de:train", equalise__pairs_per_batch=4,
                                           equalise__anchor_term=1.0, learning_rate=0.05,
                                           eval__benchmarks=[{"suite": "pairs", "data": "queerbias-de:test",
                                                              "sample": 10}]))
    run_training(config)
    history = json.loads((tmp_path / "run" / "checkpoint-2" / "trainer_state.json").read_text())["log_history"]
    anchors = [entry["anchor_loss"] for entry in history if "anchor_loss" in entry]
    assert len(anchors) == 2 and anchors[0] == pytest.approx(0.0, abs=1e-6) and anchors[1] > 0


def test_without_language_modelling_the_corpus_batch_only_anchors(tiny_llama, tmp_path):
    """`lm_term: 0`: at step 1 the adapter is untouched, so the anchor is 0 and the logged loss is the weighted
    pair loss alone; with `lm_term: 1` the corpus batch's language-modelling loss is added on top."""
    def first_step(name, lm_term):
        config = config_from_dict(small_config(tiny_llama, tmp_path / name, objective="equalise", max_steps=2,
                                               eval_every=2, pairs__train="queerbias-de:train", equalise__pairs_per_batch=4,
                                               equalise__anchor_term=1.0, equalise__weight=0.5,
                                               equalise__lm_term=lm_term,
                                               eval__benchmarks=[{"suite": "pairs", "data": "queerbias-de:test",
                                                                  "sample": 4}]))
        run_training(config)
        history = json.loads((tmp_path / name / "checkpoint-2" / "trainer_state.json").read_text())["log_history"]
        return history[0]
    alone, with_lm = first_step("anchor-only", 0.0), first_step("with-lm", 1.0)
    assert alone["anchor_loss"] == pytest.approx(0.0, abs=1e-6)
    assert alone["loss"] == pytest.approx(0.5 * alone["pair_loss"], rel=1e-3, abs=1e-4)
    assert with_lm["pair_loss"] == pytest.approx(alone["pair_loss"], rel=1e-4)  # the same pairs, the same model
    assert with_lm["loss"] > alone["loss"] + 1.0  # a tiny random model's corpus loss is about ln(vocabulary)


def test_language_modelling_may_be_left_out_only_with_the_anchor(tiny_llama, tmp_path):
    with pytest.raises(QueerbiasError, match="equalise.lm_term.*needs anchor_term above 0"):
        config_from_dict(small_config(tiny_llama, tmp_path / "run", objective="equalise",
                                      pairs__train="queerbias-de:train", equalise__lm_term=0.0))
