"""Counterfactual pairing (CLP): hand computation on tiny causal and masked models, gradients."""

from __future__ import annotations

import math

import pytest
import torch

from queerbias.errors import QueerbiasError
from queerbias.models import load_model
from queerbias.pairs.schema import Pair
from queerbias.scoring.scorer import group_requests
from queerbias.suites.pairs.scoring import pair_requests
from queerbias.train.config import config_from_dict
from queerbias.train.objectives.equalise.config import EqualiseConfig
from queerbias.train.objectives.equalise.loss import batch_tensors, pair_loss, training_scorer
from queerbias.train.objectives.equalise.pairing import DIVERGENCES, coarsened, divergence, paired_positions

from .helpers import small_config

PAIRS = [
    Pair("p1", "Schwule Männer sind oft sehr krank.", "Heterosexuelle Männer sind oft sehr krank.", "gay"),
    Pair("p2", "Alle wissen, dass Kim nicht-binär ist und lügt.", "Alle wissen, dass Kim cis ist und lügt.",
         "nonbinary"),
]


def by_hand(lm, couples, kind: str) -> float:
    """The divergence summed over the couples, from full forward passes of each sentence
    (every masked variant built separately for the masked LM)."""
    tokenizer = lm.tokenizer
    total = 0.0
    for (ids1, p1), (ids2, p2) in couples:
        rows = []
        for ids, p in ((ids1, p1), (ids2, p2)):
            ids = list(ids)
            with torch.no_grad():
                if lm.kind == "causal":
                    logits = lm.model(input_ids=torch.tensor([ids])).logits[0, p - 1]
                else:
                    ids[p] = tokenizer.mask_token_id
                    logits = lm.model(input_ids=torch.tensor([ids])).logits[0, p]
            rows.append(torch.log_softmax(logits.double(), -1))
        P, Q = rows[0].exp(), rows[1].exp()
        kl_pq = float((P * (rows[0] - rows[1])).sum())
        kl_qp = float((Q * (rows[1] - rows[0])).sum())
        if kind == "kl":
            total += kl_qp
        elif kind == "symmetric_kl":
            total += (kl_pq + kl_qp) / 2
        else:
            M = (P + Q) / 2
            total += float(0.5 * (P * (P / M).log()).sum() + 0.5 * (Q * (Q / M).log()).sum())
    return total


@pytest.mark.parametrize("family", ["tiny_llama", "tiny_bert"])
@pytest.mark.parametrize("kind", DIVERGENCES)
def test_pairing_term_equals_a_hand_computation(family, kind, request):
    path = request.getfixturevalue(family)
    lm = load_model(str(path))
    scorer = training_scorer(lm.model, lm.tokenizer, lm.kind)
    settings = config_from_dict(small_config(path, "unused", objective="equalise",
                                             pairs__train="queerbias-de:train", equalise__pair_term=0.0,
                                             equalise__clp_term=1.0, equalise__clp_divergence=kind,
                                             equalise__clp_top_k=None)).section(EqualiseConfig)
    plans, _ = pair_requests(scorer, PAIRS)
    expected = []
    for first, second in plans:
        couples = [((first[0].ids, p1), (second[0].ids, p2))
                   for p1, p2 in paired_positions(lm.kind, first, second)]
        assert couples
        expected.append(by_hand(lm, couples, kind))
    with torch.no_grad():
        assert pair_loss(scorer, PAIRS, settings).item() == pytest.approx(sum(expected) / 2, rel=1e-4, abs=1e-6)


def test_causal_positions_start_after_the_first_difference(tiny_llama):
    lm = load_model(str(tiny_llama))
    scorer = training_scorer(lm.model, lm.tokenizer, lm.kind)
    first, second = pair_requests(scorer, PAIRS[1:])[0][0]
    ids1, ids2 = first[0].ids, second[0].ids
    differ = next(i for i, (x, y) in enumerate(zip(ids1, ids2)) if x != y)
    couples = paired_positions("causal", first, second)
    assert couples and all(p1 > differ for p1, _ in couples)
    # the shared positions before the difference are scored by the benchmark, but not paired
    assert any(p <= differ for p in first[1])
    assert paired_positions("causal", first, second, limit=1) == couples[:1]
    # a masked LM sees the whole sentence at every position: all shared positions count
    assert len(paired_positions("masked", first, second)) == len(first[1])


def test_divergences_vanish_on_equal_rows_and_are_positive_otherwise():
    a = torch.log_softmax(torch.tensor([[1.0, 2.0, 0.5]]), -1)
    b = torch.log_softmax(torch.tensor([[0.0, 2.5, 1.0]]), -1)
    for kind in DIVERGENCES:
        assert divergence(a, a, kind).item() == pytest.approx(0.0, abs=1e-7)
        assert divergence(a, b, kind).item() > 0
    assert divergence(a, b, "js").item() <= math.log(2)


def test_pairing_gradient_reaches_the_adapter(tiny_llama, tmp_path):
    from queerbias.train.modeling import attach_adapter

    lm = load_model(str(tiny_llama))
    config = config_from_dict(small_config(tiny_llama, tmp_path / "x", objective="equalise",
                                           pairs__train="queerbias-de:train", equalise__pair_term=0.0,
                                           equalise__clp_term=1.0))
    model = attach_adapter(lm.model, config, lm.kind)
    with torch.no_grad():  # LoRA's B starts at 0: make the adapter change the output
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(0, 0.02)
    model.train()
    scorer = training_scorer(model, lm.tokenizer, lm.kind)
    loss = pair_loss(scorer, PAIRS, config.section(EqualiseConfig))
    loss.backward()
    grads = [p.grad for name, p in model.named_parameters() if "lora_A" in name]
    assert grads and all(g is not None for g in grads) and any(g.abs().sum() > 0 for g in grads)
    assert batch_tensors(scorer, PAIRS).rows.shape[1] == lm.model.config.vocab_size


def test_coarsened_divergence_is_a_lower_bound_equal_without_rest_mass():
    torch.manual_seed(0)
    a = torch.log_softmax(torch.randn(4, 50) * 3, -1)
    b = torch.log_softmax(torch.randn(4, 50) * 3, -1)
    for kind in DIVERGENCES:
        full = divergence(a, b, kind)
        for k in (5, 20):
            small_a, small_b = coarsened(a, b, k)
            assert small_a.shape == (4, k + 1)
            assert torch.allclose(small_a.exp().sum(-1), torch.ones(4), atol=1e-5)
            assert (divergence(small_a, small_b, kind) <= full + 1e-6).all()
        assert torch.allclose(divergence(*coarsened(a, b, 50), kind), full)
    # all the mass on the kept tokens: the coarsened divergence is the full one
    peaked_a = torch.log_softmax(torch.tensor([[9.0, 8.0, -40.0, -40.0]]), -1)
    peaked_b = torch.log_softmax(torch.tensor([[8.0, 9.0, -40.0, -40.0]]), -1)
    assert divergence(*coarsened(peaked_a, peaked_b, 2), "js").item() == pytest.approx(
        divergence(peaked_a, peaked_b, "js").item(), rel=1e-4)


@pytest.mark.parametrize("family", ["tiny_gpt2", "tiny_llama", "tiny_gemma"])
def test_the_prefix_tree_pass_gives_the_padded_rows(family, request):
    """Training scores a pair batch in one pass over the prefix tree of its sentences (what they share
    computed once, nothing padded): the same rows as the padded pass, checked once per scorer."""
    lm = load_model(str(request.getfixturevalue(family)))
    scorer = training_scorer(lm.model, lm.tokenizer, lm.kind)
    _, requests = pair_requests(scorer, PAIRS)
    tree = scorer.distribution_tensor(requests)
    assert scorer._tree is True
    keys, padded = scorer._distributions(list(group_requests(requests).items()))
    order = [keys.index(request) for request in requests]
    assert torch.allclose(tree, padded[order], atol=1e-5)


def test_a_model_without_4d_masks_keeps_the_padded_pass(tiny_llama, monkeypatch):
    lm = load_model(str(tiny_llama))
    scorer = training_scorer(lm.model, lm.tokenizer, lm.kind)

    def refuses(*args, **kwargs):
        raise TypeError("forward() got an unexpected keyword argument 'position_ids'")

    monkeypatch.setattr(scorer, "_tree_distributions", refuses)
    _, requests = pair_requests(scorer, PAIRS)
    rows = scorer.distribution_tensor(requests)
    assert scorer._tree is False and rows.shape == (len(requests), lm.model.config.vocab_size)


@pytest.mark.parametrize("family", ["tiny_llama", "tiny_bert"])
def test_the_pair_loss_skips_what_both_sentences_share_without_changing_d(family, request):
    """A causal LM's positions before the first differing token add the same to both scores: training
    leaves them out (fewer rows through the LM head), and s_more - s_less stays what it was."""
    lm = load_model(str(request.getfixturevalue(family)))
    scorer = training_scorer(lm.model, lm.tokenizer, lm.kind)
    every, only = (batch_tensors(scorer, PAIRS, difference_only=flag) for flag in (False, True))
    assert torch.allclose(every.more - every.less, only.more - only.less, atol=1e-5)
    assert (len(only.requests) < len(every.requests)) == (lm.kind == "causal")


def test_the_base_reference_pairs_the_identity_sentence_with_the_base_counterfactual(tiny_llama, tmp_path):
    """`clp_reference: base`: the divergence between sent_more's rows under the adapted model and
    sent_less's under the base (adapter off, read without a graph), by hand from full forward passes."""
    from queerbias.train.modeling import attach_adapter

    lm = load_model(str(tiny_llama))
    raw = small_config(tiny_llama, tmp_path / "x", objective="equalise", pairs__train="queerbias-de:train",
                       equalise__pair_term=0.0, equalise__clp_term=1.0, equalise__clp_top_k=None,
                       equalise__clp_divergence="kl", equalise__clp_reference="base")
    config = config_from_dict(raw)
    model = attach_adapter(lm.model, config, lm.kind)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(0, 0.05, generator=torch.Generator().manual_seed(0))
    model.eval()
    scorer = training_scorer(model, lm.tokenizer, lm.kind)
    plans, _ = pair_requests(scorer, PAIRS)
    expected = 0.0
    for first, second in plans:
        for p1, p2 in paired_positions(lm.kind, first, second):
            with torch.no_grad():
                a = torch.log_softmax(model(input_ids=torch.tensor([first[0].ids])).logits[0, p1 - 1].double(), -1)
                with model.disable_adapter():
                    b = torch.log_softmax(model(input_ids=torch.tensor([second[0].ids])).logits[0, p2 - 1].double(),
                                          -1)
            expected += float((b.exp() * (b - a)).sum())
    settings = config.section(EqualiseConfig)
    loss = pair_loss(scorer, PAIRS, settings, model.disable_adapter)
    assert loss.item() == pytest.approx(expected / 2, rel=1e-4, abs=1e-6)
    with torch.no_grad():  # not the divergence of the two sentences under the adapted model
        both = pair_loss(scorer, PAIRS, config_from_dict({**raw, "equalise": {**raw["equalise"],
                                                                              "clp_reference": "pair"}})
                         .section(EqualiseConfig))
    assert abs(both.item() - loss.item()) > 1e-6
    loss.backward()
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for n, p in model.named_parameters() if "lora_" in n)


def test_the_base_reference_needs_lora(tiny_llama, tmp_path):
    with pytest.raises(QueerbiasError, match="equalise.clp_reference"):
        config_from_dict(small_config(tiny_llama, tmp_path / "x", objective="equalise",
                                      pairs__train="queerbias-de:train", method="full", equalise__clp_term=1.0,
                                      equalise__clp_reference="base"))
