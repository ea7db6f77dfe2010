"""`activation_checkpointing: true`: the same gradients as the plain pass, with the LM head's vocabulary-wide
tensors recomputed in the backward pass rather than held (train/modeling.py, `recompute_output_head`)."""

from __future__ import annotations

import copy

import pytest
import torch

from queerbias.errors import QueerbiasError
from queerbias.models import load_model
from queerbias.pairs.resolve import load_pairs
from queerbias.train.config import config_from_dict
from queerbias.train.modeling import attach_adapter, recompute_output_head
from queerbias.train.objectives.contrast.batches import CellBatches
from queerbias.train.objectives.contrast.config import ContrastConfig
from queerbias.train.objectives.contrast.loss import contrast_loss
from queerbias.train.objectives.equalise.loss import training_scorer
from queerbias.train.runner import run_training
from queerbias.train.trainer import training_arguments

from .helpers import TINY_BENCHMARK, small_config

TRAINING = "queerbias-de-contrast:train"


def adapted(tiny_gemma, tmp_path, checkpointed: bool):
    config = config_from_dict(small_config(tiny_gemma, tmp_path / "run", objective="contrast", pairs__train=TRAINING,
                                           eval__benchmarks=TINY_BENCHMARK, activation_checkpointing=checkpointed))
    lm = load_model(str(tiny_gemma))
    model = attach_adapter(lm.model, config, lm.kind)
    if checkpointed:  # what the trainer does with the config key (transformers: the layers; queerbias: the head)
        model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
        recompute_output_head(model)
    model.train()
    return config, lm, model


def held_copies_of_the_head(model, run) -> int:
    """How many copies of the head's weights (as many numbers, other storage: a cast, in any layout) autograd holds
    for the backward pass of `run()`."""
    weight = model.get_output_embeddings().weight
    found = []

    def pack(tensor):
        if tensor.numel() == weight.numel() and tensor.untyped_storage().data_ptr() != \
                weight.untyped_storage().data_ptr():
            found.append(tensor.dtype)
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        run()
    return len(found)


def test_the_key_reaches_the_trainer(tiny_gemma, tmp_path):
    on = adapted(tiny_gemma, tmp_path, True)[0]
    assert training_arguments(on, tmp_path, True)["activation_checkpointing"] is True
    assert training_arguments(on, tmp_path, True)["activation_checkpointing_kwargs"] == {"use_reentrant": False}
    off = config_from_dict(small_config(tiny_gemma, tmp_path / "run", eval__benchmarks=TINY_BENCHMARK))
    assert off.activation_checkpointing is False
    assert training_arguments(off, tmp_path, True)["activation_checkpointing"] is False


def test_under_bf16_autocast_no_copy_of_the_head_is_held(tiny_gemma, tmp_path):
    """Autocast casts the frozen head's weights anew in each pass and keeps the copy for the backward pass (Gemma 3:
    335 MB a pass); recomputed, the head keeps only its input. Without a graph (a base pass) it runs as it is."""
    ids = torch.tensor([[2, 10, 11, 12, 13]])
    for checkpointed, expected in ((False, 1), (True, 0)):
        model = adapted(tiny_gemma, tmp_path, checkpointed)[2]

        def forward():
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return model(input_ids=ids).logits

        assert held_copies_of_the_head(model, forward) == expected
        with torch.no_grad():
            assert forward().shape[-1] == model.get_output_embeddings().weight.shape[0]


def test_the_gradients_are_those_of_the_plain_pass(tiny_gemma, tmp_path):
    """One contrast batch and one corpus pass, with and without checkpointing, dropout on: the same LoRA gradients
    (non-reentrant checkpointing replays the dropout masks)."""
    pairs = load_pairs(TRAINING).pairs
    batch = CellBatches(pairs, cells=2, stereotypes=2, neutral=2, mined=0, seed=3).draw(0, 0, 0)
    settings = ContrastConfig(anchor_term=1.0)
    ids = torch.tensor([[2, 10, 11, 12, 13, 14, 15]])
    grads = {}
    for checkpointed in (False, True):
        _, lm, model = adapted(tiny_gemma, tmp_path, checkpointed)
        scorer = training_scorer(model, lm.tokenizer, lm.kind)
        torch.manual_seed(0)
        contrast, anchor = contrast_loss(scorer, batch, settings, model.disable_adapter)
        lm_loss = model(input_ids=ids, labels=ids).loss
        (contrast + anchor + lm_loss).backward()
        grads[checkpointed] = {name: copy.deepcopy(p.grad) for name, p in model.named_parameters() if p.grad is not None}
    assert grads[False] and grads[False].keys() == grads[True].keys()
    assert any(g.abs().sum() > 0 for g in grads[False].values())
    for name, grad in grads[False].items():
        torch.testing.assert_close(grads[True][name], grad, rtol=1e-5, atol=1e-7, msg=name)


def test_an_architecture_that_cannot_recompute_its_layers_is_refused_before_the_base_is_scored(tiny_xlm, tmp_path):
    """XLM's layers have no checkpointing in transformers: one line naming the key, before any work is written."""
    config = config_from_dict(small_config(tiny_xlm, tmp_path / "run", kind="causal", lang="de",
                                           eval__benchmarks=TINY_BENCHMARK, activation_checkpointing=True))
    with pytest.raises(QueerbiasError, match="^config key 'activation_checkpointing': XLMWithLMHeadModel cannot "
                                             "recompute its layers in the backward pass"):
        run_training(config)
    assert not (tmp_path / "run" / "base").exists()
