"""One-sided equalising (do no harm): only a preference for the stereotype is penalised.

By hand on tensors and on a tiny model's own scores and next-token distributions; a pair that
prefers the counterfactual adds nothing and sends no gradient to the adapter.
"""

from __future__ import annotations

import math

import pytest
import torch

from queerbias.models import load_model
from queerbias.pairs.schema import Pair
from queerbias.suites.pairs.scoring import pair_requests
from queerbias.train.config import config_from_dict
from queerbias.train.objectives.equalise.config import EqualiseConfig
from queerbias.train.objectives.equalise.loss import batch_tensors, equalise_loss, pair_loss, training_scorer
from queerbias.train.objectives.equalise.pairing import paired_positions

from .helpers import small_config
from .test_pairing import by_hand

SENTENCES = [
    ("Schwule Männer sind oft sehr krank.", "Heterosexuelle Männer sind oft sehr krank.", "gay"),
    ("Alle wissen, dass Kim nicht-binär ist und lügt.", "Alle wissen, dass Kim cis ist und lügt.", "nonbinary"),
    ("Ich finde, trans Frauen sind nur in einer Phase.", "Ich finde, cis Frauen sind nur in einer Phase.",
     "trans_women"),
    ("Bisexuelle Menschen wollen nur Aufmerksamkeit.", "Heterosexuelle Menschen wollen nur Aufmerksamkeit.",
     "bisexual"),
]


def test_one_sided_terms_by_hand():
    more = torch.tensor([1.0, 3.0, -2.0, 0.0])
    less = torch.zeros(4)
    groups = ["a", "a", "b", "b"]
    # d+ = [1, 3, 0, 0]
    assert equalise_loss(more, less, groups, 1.0, 0.0, one_sided=True).item() == pytest.approx((1 + 9) / 4)
    assert equalise_loss(more, less, groups, 0.0, 1.0, one_sided=True).item() == pytest.approx((2.0**2 + 0) / 2)
    sign = (math.tanh(1 / 2) + math.tanh(3 / 2)) / 2
    assert equalise_loss(more, less, groups, 0.0, 0.0, sign_term=1.0, temperature=2.0, one_sided=True).item() == \
        pytest.approx(sign**2 / 2)
    # every pair preferring the stereotype: the one-sided loss is the symmetric one
    positive = torch.tensor([0.5, 2.0, 1.5, 0.1])
    for terms in ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (1.0, 1.0, 1.0)):
        assert equalise_loss(positive, less, groups, *terms, one_sided=True).item() == pytest.approx(
            equalise_loss(positive, less, groups, *terms).item())


def _oriented(scorer) -> tuple[list[Pair], list[Pair]]:
    """The pairs oriented so the scorer's model prefers the stereotype (d > 0), and swapped (d < 0)."""
    pairs = [Pair(f"p{i}", more, less, group) for i, (more, less, group) in enumerate(SENTENCES)]
    with torch.no_grad():
        batch = batch_tensors(scorer, pairs)
    d = (batch.more - batch.less).tolist()
    assert all(abs(x) > 1e-5 for x in d)  # far above float noise, so the orientation holds
    stereo = [p if x > 0 else Pair(p.pair_id, p.sent_less, p.sent_more, p.group) for p, x in zip(pairs, d)]
    anti = [Pair(p.pair_id, p.sent_less, p.sent_more, p.group) for p in stereo]
    return stereo, anti


def _settings(path, **terms):
    overrides = {f"equalise__{key}": value for key, value in terms.items()}
    return config_from_dict(small_config(path, "unused", objective="equalise", pairs__train="queerbias-de:train",
                                         equalise__clp_top_k=None, **overrides)).section(EqualiseConfig)


@pytest.mark.parametrize("family", ["tiny_llama", "tiny_bert"])
def test_one_sided_pair_loss_by_hand_on_a_tiny_model(family, request):
    """Mixed batch: mean over all pairs of max(0, d)^2 plus the pairing divergence summed over the
    stereotypical pairs' positions only, divided by every pair."""
    path = request.getfixturevalue(family)
    lm = load_model(str(path))
    scorer = training_scorer(lm.model, lm.tokenizer, lm.kind)
    stereo, anti = _oriented(scorer)
    mixed = [stereo[0], anti[1], stereo[2], anti[3]]
    with torch.no_grad():
        batch = batch_tensors(scorer, mixed)  # the forward pass pair_loss makes, with the same batch
        d = (batch.more - batch.less).tolist()
        assert any(x > 0 for x in d) and any(x < 0 for x in d)
        plans, _ = pair_requests(scorer, mixed)
        divergences = []
        for (first, second), pair in zip(plans, mixed):
            if pair.direction == "antistereo":
                first, second = second, first
            couples = [((first[0].ids, p1), (second[0].ids, p2)) for p1, p2 in paired_positions(lm.kind, first, second)]
            divergences.append(by_hand(lm, couples, "js"))
        stereotypical = sum(v for v, x in zip(divergences, d) if x > 0)
        expected = sum(max(0.0, x) ** 2 for x in d) / 4 + 10.0 * stereotypical / 4
        got = pair_loss(scorer, mixed, _settings(path, one_sided=True, clp_term=10.0)).item()
        assert got == pytest.approx(expected, rel=1e-4, abs=1e-6)
        symmetric = pair_loss(scorer, mixed, _settings(path, clp_term=10.0)).item()
        assert symmetric == pytest.approx(sum(x**2 for x in d) / 4 + 10.0 * sum(divergences) / 4, rel=1e-4)


def _adapted(path):
    """A tiny Llama with a LoRA adapter that changes its output (LoRA's B starts at 0), and its scorer."""
    from queerbias.train.modeling import attach_adapter

    lm = load_model(str(path))
    model = attach_adapter(lm.model, config_from_dict(small_config(path, "unused", objective="equalise",
                                                                   pairs__train="queerbias-de:train")), lm.kind)
    with torch.no_grad():
        generator = torch.Generator().manual_seed(0)
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.02)
    model.eval()  # no LoRA dropout: the orientation and the loss see the same model
    return model, training_scorer(model, lm.tokenizer, lm.kind)


def _gradients(model, scorer, pairs, settings) -> tuple[float, list[torch.Tensor]]:
    model.zero_grad()
    loss = pair_loss(scorer, pairs, settings)
    loss.backward()
    return loss.item(), [p.grad.clone() if p.grad is not None else torch.zeros_like(p)
                         for name, p in model.named_parameters() if "lora_" in name]


def test_anti_stereotypical_pairs_send_no_gradient(tiny_llama):
    """Every term on, every pair preferring the counterfactual: one-sided, loss 0 and no gradient;
    symmetric, a gradient that would move them."""
    model, scorer = _adapted(tiny_llama)
    _, anti = _oriented(scorer)
    terms = dict(pair_term=1.0, group_term=1.0, sign_term=1.0, clp_term=10.0)
    loss, grads = _gradients(model, scorer, anti, _settings(tiny_llama, one_sided=True, **terms))
    assert loss == 0.0 and grads and all(float(g.abs().sum()) == 0.0 for g in grads)
    loss, grads = _gradients(model, scorer, anti, _settings(tiny_llama, **terms))
    assert loss > 0 and any(float(g.abs().sum()) > 0 for g in grads)
    # one-sided score terms with pairing on every pair: exactly the pairing term
    pairing_only = _settings(tiny_llama, pair_term=0.0, clp_term=10.0)
    with torch.no_grad():
        expected = pair_loss(scorer, anti, pairing_only).item()
        split = pair_loss(scorer, anti, _settings(tiny_llama, one_sided=True, clp_one_sided=False, **terms)).item()
    assert expected > 0 and split == pytest.approx(expected, rel=1e-6)


def test_stereotypical_pairs_get_the_symmetric_gradient(tiny_llama):
    """Where every pair prefers the stereotype, one-sided and symmetric agree, gradient included."""
    model, scorer = _adapted(tiny_llama)
    stereo, _ = _oriented(scorer)
    terms = dict(pair_term=1.0, group_term=1.0, clp_term=10.0)
    one, one_grads = _gradients(model, scorer, stereo, _settings(tiny_llama, one_sided=True, **terms))
    both, both_grads = _gradients(model, scorer, stereo, _settings(tiny_llama, **terms))
    assert one == pytest.approx(both, rel=1e-5) and one > 0
    assert all(torch.allclose(a, b, rtol=1e-4, atol=1e-7) for a, b in zip(one_grads, both_grads, strict=True))
