"""`pair_loss` is its parts on one batch: the score terms of `equalise_loss` with every term of the section
(the target shrunk from the base's preference, one-sided) and the pairing term on the positions and
top-k tokens the section names. On a tiny Llama with a LoRA adapter large enough to move pairs."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from queerbias.train.objectives.equalise.loss import batch_tensors, equalise_loss, pair_loss, shrunk_target
from queerbias.train.objectives.equalise.pairing import pairing_loss, pairing_requests

from .test_one_sided import _adapted, _oriented, _settings


def test_a_shrunk_target_keeps_a_share_of_the_base_preference():
    d_base = torch.tensor([-2.0, 4.0])
    assert shrunk_target(d_base, 0.5, one_sided=False).tolist() == [-1.0, 2.0]
    assert shrunk_target(d_base, 0.5, one_sided=True).tolist() == [0.0, 2.0]  # an anti-stereotypical base: 0


@pytest.fixture(scope="module")
def moved(tiny_llama):
    """The adapted model, its scorer and pairs both ways round, the adapter scaled up so that pairs move."""
    model, scorer = _adapted(tiny_llama)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.mul_(30)
    stereo, anti = _oriented(scorer)
    return model, scorer, stereo + anti


def test_pair_loss_is_the_sections_score_terms_on_its_batch(tiny_llama, moved):
    model, scorer, pairs = moved
    settings = _settings(tiny_llama, pair_term=0.7, group_term=1.3, sign_term=0.9, temperature=2.0, keep=0.5,
                         one_sided=True)
    groups = [p.group for p in pairs]
    with torch.no_grad():
        with model.disable_adapter():
            base = batch_tensors(scorer, pairs, difference_only=True)
        batch = batch_tensors(scorer, pairs, difference_only=True)
        d_base = base.more - base.less

        def terms(target):
            return equalise_loss(batch.more, batch.less, groups, 0.7, 1.3, 0.9, 2.0, True, target).item()

        expected = terms(shrunk_target(d_base, 0.5, one_sided=True))
        got = pair_loss(scorer, pairs, settings, model.disable_adapter).item()
    assert got == pytest.approx(expected, rel=1e-5)
    # in this batch the one-sided target matters: an anti-stereotypical base pair moved towards 0
    assert expected != pytest.approx(terms(shrunk_target(d_base, 0.5, one_sided=False)), rel=1e-3)


def test_the_pairing_term_reads_the_sections_positions_and_top_tokens(tiny_llama, moved):
    model, scorer, pairs = moved
    settings = replace(_settings(tiny_llama, pair_term=0.0, clp_term=1.0, clp_positions=1), clp_top_k=4)
    with torch.no_grad():
        batch = batch_tensors(scorer, pairs, difference_only=True)

        def pairing(limit, top_k):
            couples = pairing_requests("causal", batch.plans, limit)
            return pairing_loss(batch.rows, batch.requests, couples, [p.direction for p in pairs],
                                settings.clp_divergence, top_k).item()

        got = pair_loss(scorer, pairs, settings).item()
    assert got == pytest.approx(pairing(1, 4), rel=1e-5)
    assert pairing(1, 4) != pytest.approx(pairing(None, 4), rel=1e-3)  # the first position after the difference
    assert pairing(1, 4) != pytest.approx(pairing(1, None), rel=1e-3)  # on the 4 likeliest tokens
