"""equalise: the pair loss is the benchmark's own score, reaches the adapter, lowers held-out loss."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch

from queerbias.models import load_model
from queerbias.pairs.resolve import load_pairs
from queerbias.pairs.sampling import sample_pairs
from queerbias.suites.pairs.scoring import pair_outcome
from queerbias.suites.pairs.suite import PairsSuite
from queerbias.suites.store import run_to_dir
from queerbias.train.config import config_from_dict
from queerbias.train.objectives.equalise.config import EqualiseConfig
from queerbias.train.objectives.equalise.loss import batch_tensors, equalise_loss, pair_loss, training_scorer
from queerbias.train.pair_batches import PairBatches
from queerbias.train.runner import run_training

from .helpers import small_config

HELD_OUT = sample_pairs(load_pairs("queerbias-de:test"), 24, seed=1)


@pytest.mark.parametrize("family", ["tiny_llama", "tiny_bert"])
def test_pair_scores_equal_queerbias_score(family, request, tmp_path):
    """The differentiable s is the scorer's: same numbers as `queerbias score` writes."""
    model = request.getfixturevalue(family)
    pairs = sample_pairs(load_pairs("queerbias-de"), 30, seed=0)
    run_to_dir(PairsSuite(), str(model), pairs, tmp_path / "scored", progress=False)
    written = pd.read_csv(tmp_path / "scored" / "pairs.csv").set_index("pair_id")
    lm = load_model(str(model))
    batch = batch_tensors(training_scorer(lm.model, lm.tokenizer, lm.kind), pairs.pairs)
    more, less = batch.more, batch.less
    assert more.requires_grad
    exact = 0
    for pair, m, l in zip(pairs.pairs, more.tolist(), less.tolist()):
        row = written.loc[pair.pair_id]
        outcome = pair_outcome(pair, m, l)
        # Written scores are rounded to 3 decimals. The training pass batches sentences
        # differently, so a score within float noise of a rounding boundary (…0.0005) may
        # round the other way: one unit of the last decimal, never more.
        assert outcome.score_more == pytest.approx(row["score_more"], abs=1.001e-3)
        assert outcome.score_less == pytest.approx(row["score_less"], abs=1.001e-3)
        if (outcome.score_more, outcome.score_less) == (row["score_more"], row["score_less"]):
            exact += 1
            assert outcome.biased == row["biased"]
    assert exact >= len(pairs.pairs) - 2  # boundary cases are rare
    loss = equalise_loss(more, less, [p.group for p in pairs.pairs], pair_term=1.0, group_term=0.0)
    expected = ((written["score_more"] - written["score_less"]) ** 2).mean()
    assert loss.item() == pytest.approx(expected, abs=2e-3)


def test_group_and_sign_terms_are_squared_group_means():
    more = torch.tensor([1.0, 3.0, -2.0, 0.0])
    less = torch.zeros(4)
    groups = ["a", "a", "b", "b"]
    assert equalise_loss(more, less, groups, 0.0, 1.0).item() == pytest.approx((2.0**2 + 1.0**2) / 2)
    assert equalise_loss(more, less, groups, 1.0, 0.0).item() == pytest.approx((1 + 9 + 4 + 0) / 4)
    signs = [(math.tanh(1 / 2) + math.tanh(3 / 2)) / 2, (math.tanh(-2 / 2) + 0) / 2]
    assert equalise_loss(more, less, groups, 0.0, 0.0, sign_term=1.0, temperature=2.0).item() == \
        pytest.approx((signs[0] ** 2 + signs[1] ** 2) / 2)


def test_gradients_reach_the_adapter(tiny_llama, tmp_path):
    from queerbias.train.modeling import attach_adapter

    lm = load_model(str(tiny_llama))
    config = config_from_dict(small_config(tiny_llama, tmp_path / "x", objective="equalise",
                                           pairs__train="queerbias-de:train"))
    model = attach_adapter(lm.model, config, lm.kind)
    model.train()
    loss = pair_loss(training_scorer(model, lm.tokenizer, lm.kind), HELD_OUT.pairs[:8], config.section(EqualiseConfig))
    loss.backward()
    grads = [p.grad for name, p in model.named_parameters() if "lora_B" in name]
    assert grads and all(g is not None for g in grads) and any(g.abs().sum() > 0 for g in grads)
    assert all(p.grad is None for name, p in model.named_parameters() if not p.requires_grad)


def held_out_pair_loss(model_path, settings) -> float:
    lm = load_model(str(model_path))
    with torch.no_grad():
        return pair_loss(training_scorer(lm.model, lm.tokenizer, lm.kind), HELD_OUT.pairs, settings).item()


@pytest.mark.parametrize("family", ["tiny_llama", "tiny_bert"])
def test_a_few_steps_lower_the_pair_loss_on_held_out_pairs(family, request, tmp_path):
    model = request.getfixturevalue(family)
    config = config_from_dict(small_config(
        model, tmp_path / "run", objective="equalise", max_steps=8, eval_every=8, learning_rate=1e-2,
        pairs__train="queerbias-de:train", equalise__pairs_per_batch=16, equalise__weight=1000.0,
        equalise__group_term=1.0, eval__benchmarks=[{"suite": "pairs", "sample": 10}]))
    result = run_training(config)
    before = held_out_pair_loss(model, config.section(EqualiseConfig))
    after = held_out_pair_loss(result["final"], config.section(EqualiseConfig))
    assert after < 0.8 * before, (before, after)
    logged = [e for e in result["metrics"]]
    assert logged[-1]["held_out"]["train_pairs"] == "queerbias-de:train"


def test_pair_batches_are_balanced_and_seeded():
    pairs = load_pairs("queerbias-de:train").pairs
    batches = PairBatches(pairs, pairs_per_batch=32, balance=True, seed=0)
    batch = batches.draw(step=3, micro=0, process=0)
    counts = pd.Series([p.group for p in batch]).value_counts()
    assert len(batch) == 32 and counts.max() - counts.min() <= 1
    assert batch == PairBatches(pairs, 32, True, seed=0).draw(3, 0, 0)  # what a resumed run draws
    assert batch != batches.draw(3, 0, 1) and batch != batches.draw(4, 0, 0)
    assert len(PairBatches(pairs, 8, balance=False, seed=0).draw(0, 0, 0)) == 8
