"""`equalise.keep`, `residual_scale` and `flip_term`: terms read against the base model's own preference.

By hand on tensors, and on a tiny Llama with a LoRA adapter: d_base is read with the adapter
switched off, so keep's loss is mean (d - keep * d_base)^2 (one-sided, a pair that the base found
anti-stereotypical is left where it is), residual_scale c divides each square by |d_base| + c, and the
flip term adds mean max(0, -sign(d_base) * d)^2.
"""

from __future__ import annotations

import pytest
import torch

from queerbias.errors import QueerbiasError
from queerbias.train.config import config_from_dict
from queerbias.train.objectives.equalise.loss import batch_tensors, equalise_loss, pair_loss

from .helpers import small_config
from .test_one_sided import _adapted, _oriented, _settings


def test_the_target_by_hand():
    more = torch.tensor([2.0, -1.0, 0.5, 3.0])
    less = torch.zeros(4)
    target = torch.tensor([1.0, -0.5, 0.0, 1.0])
    groups = ["a", "a", "b", "b"]
    # d - target = [1, -0.5, 0.5, 2]
    assert equalise_loss(more, less, groups, 1.0, 0.0, target=target).item() == pytest.approx((1 + 0.25 + 0.25 + 4) / 4)
    assert equalise_loss(more, less, groups, 0.0, 1.0, target=target).item() == pytest.approx(
        ((0.5 / 2) ** 2 + (2.5 / 2) ** 2) / 2)
    assert equalise_loss(more, less, groups, 1.0, 0.0, one_sided=True, target=target).item() == pytest.approx(
        (1 + 0 + 0.25 + 4) / 4)


def test_the_flip_term_by_hand():
    more = torch.tensor([2.0, -1.0, 0.5, -3.0])
    less = torch.zeros(4)
    base = torch.tensor([1.0, 2.0, -0.5, -1.0])
    groups = ["a", "a", "b", "b"]
    # crossed: pair 2 by 1 (base +, now -1), pair 3 by 0.5 (base -, now +0.5); pairs 1 and 4 kept their side
    assert equalise_loss(more, less, groups, 0.0, 0.0, flip_term=1.0, base=base).item() == pytest.approx(
        (1 + 0.25) / 4)
    plain = equalise_loss(more, less, groups, 1.0, 1.0)
    assert equalise_loss(more, less, groups, 1.0, 1.0, flip_term=2.0, base=base).item() == pytest.approx(
        plain.item() + 2.0 * (1 + 0.25) / 4)
    # measured from d itself, not from the shrunk target: a pair between 0 and its target has not crossed
    target = 0.5 * base
    assert equalise_loss(more, less, groups, 0.0, 0.0, target=target, flip_term=1.0, base=base).item() == \
        pytest.approx((1 + 0.25) / 4)


def test_the_residual_scale_by_hand():
    more = torch.tensor([2.0, -1.0, 0.5, 3.0])
    less = torch.zeros(4)
    base = torch.tensor([3.0, -2.0, 0.0, 8.0])
    target = 0.25 * base
    groups = ["a", "a", "b", "b"]
    residual = more - target  # [1.25, -0.5, 0.5, 1.0]
    scale = base.abs() + 1.0  # [4, 3, 1, 9]
    assert equalise_loss(more, less, groups, 1.0, 0.0, target=target, base=base, residual_scale=1.0).item() == \
        pytest.approx(float((residual.pow(2) / scale).mean()))
    # the group term averages the scaled residuals: a pair near indifference weighs more
    scaled = residual / scale.sqrt()
    assert equalise_loss(more, less, groups, 0.0, 1.0, target=target, base=base, residual_scale=1.0).item() == \
        pytest.approx(float(((scaled[:2].mean()) ** 2 + (scaled[2:].mean()) ** 2) / 2))
    # the same move costs a pair near indifference more than one with a large base preference
    moved = torch.tensor([1.0, 1.0])
    near, far = torch.tensor([0.1, 0.1]), torch.tensor([8.0, 8.0])
    assert equalise_loss(near + moved, torch.zeros(2), ["a", "b"], 1.0, 0.0, target=near, base=near,
                         residual_scale=1.0) > \
        equalise_loss(far + moved, torch.zeros(2), ["a", "b"], 1.0, 0.0, target=far, base=far, residual_scale=1.0)


def _d(scorer, pairs) -> torch.Tensor:
    with torch.no_grad():
        batch = batch_tensors(scorer, pairs, difference_only=True)
    return batch.more - batch.less


def _base_and_adapted_d(model, scorer, pairs) -> tuple[torch.Tensor, torch.Tensor]:
    """Each pair's d with the adapter switched off (the base), then with it on."""
    with model.disable_adapter():
        d_base = _d(scorer, pairs)
    return d_base, _d(scorer, pairs)


@pytest.mark.parametrize("one_sided", [False, True])
def test_keep_pulls_towards_a_share_of_the_base_preference(tiny_llama, one_sided):
    model, scorer = _adapted(tiny_llama)
    stereo, anti = _oriented(scorer)
    mixed = [stereo[0], anti[1], stereo[2], anti[3]]
    d_base, d = _base_and_adapted_d(model, scorer, mixed)
    assert not torch.allclose(d, d_base)  # the adapter changes the scores: the target is the base's
    target = 0.5 * (d_base.clamp(min=0) if one_sided else d_base)
    gap = d - target
    expected = float((gap.clamp(min=0) if one_sided else gap).pow(2).mean())
    settings = _settings(tiny_llama, keep=0.5, one_sided=one_sided)
    with torch.no_grad():
        got = pair_loss(scorer, mixed, settings, model.disable_adapter).item()
    assert got == pytest.approx(expected, rel=1e-4, abs=1e-7)
    # the adapter is switched back on afterwards: the same scores as before the target was read
    assert torch.equal(_d(scorer, mixed), d)


def test_the_flip_term_on_a_tiny_llama(tiny_llama):
    model, scorer = _adapted(tiny_llama)
    with torch.no_grad():  # a larger adapter, so that some pairs change side
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.mul_(30)
    stereo, anti = _oriented(scorer)
    both = stereo + anti
    d_base, d = _base_and_adapted_d(model, scorer, both)
    flips = torch.relu(-torch.sign(d_base) * d)
    assert float(flips.sum()) > 0
    settings = _settings(tiny_llama, pair_term=1.0, flip_term=3.0)
    with torch.no_grad():
        got = pair_loss(scorer, both, settings, model.disable_adapter).item()
    assert got == pytest.approx(float(d.pow(2).mean() + 3.0 * flips.pow(2).mean()), rel=1e-4, abs=1e-7)


def test_keep_sends_a_gradient_only_through_the_adapted_scores(tiny_llama):
    model, scorer = _adapted(tiny_llama)
    stereo, _ = _oriented(scorer)
    model.zero_grad()
    loss = pair_loss(scorer, stereo, _settings(tiny_llama, keep=0.5), model.disable_adapter)
    loss.backward()
    grads = [p.grad for name, p in model.named_parameters() if "lora_" in name]
    assert loss.item() > 0 and any(g is not None and float(g.abs().sum()) > 0 for g in grads)


def test_the_residual_scale_on_a_tiny_llama(tiny_llama):
    model, scorer = _adapted(tiny_llama)
    stereo, anti = _oriented(scorer)
    both = stereo + anti
    d_base, d = _base_and_adapted_d(model, scorer, both)
    settings = _settings(tiny_llama, pair_term=1.0, keep=0.25, residual_scale=0.5)
    with torch.no_grad():
        got = pair_loss(scorer, both, settings, model.disable_adapter).item()
    expected = float(((d - 0.25 * d_base).pow(2) / (d_base.abs() + 0.5)).mean())
    assert got == pytest.approx(expected, rel=1e-4, abs=1e-7)


@pytest.mark.parametrize("option", ["keep", "flip_term", "residual_scale"])
def test_the_base_preference_needs_lora(tmp_path, option):
    raw = small_config(tmp_path, "unused", objective="equalise", pairs__train="queerbias-de:train",
                       method="full", **{f"equalise__{option}": 0.5})
    with pytest.raises(QueerbiasError, match=f"equalise.{option}"):
        config_from_dict(raw)


def test_keep_is_a_share_below_one(tmp_path):
    with pytest.raises(QueerbiasError, match="equalise.keep"):
        config_from_dict(small_config(tmp_path, "unused", objective="equalise", pairs__train="queerbias-de:train",
                                      equalise__keep=1.0))
