"""The contrast loss: each cell's association c, one-sided, and the identity-invariance anchor.

The benchmark's own sentence scores (`equalise.loss.batch_tensors`: WinoQueer's shared-token sums,
differentiable, positions that add the same to both sentences left out) give every pair's d. A cell's c
is the mean d of its stereotype pairs minus the mean d of its neutral pairs (`association_terms`), so a
term that every predicate of the frame shares, such as the identity phrase's own tokens, adds nothing to
c and receives no gradient from it. The anchor (`identity_anchor`) holds the model's next-token
distribution to the base's at every position from the identity words on, in the sentences of the
neutral pairs and of pairs mined from the corpus: moving the neutral reference, or how likely the group's
name is, costs there.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

import torch

from queerbias.pairs.schema import Pair
from queerbias.scoring.scorer import Scorer
from queerbias.train.objectives.contrast.batches import ContrastBatch
from queerbias.train.objectives.contrast.config import ContrastConfig
from queerbias.train.objectives.equalise.loss import BatchTensors, base_batch, batch_tensors
from queerbias.train.objectives.equalise.pairing import coarsened, divergence


def predicate_terms(scorer: Scorer, pairs: list[Pair], tensors: BatchTensors) -> torch.Tensor:
    """Per pair, d over the scored tokens after the end of its identity phrase only (`Pair.phrase_end`,
    as `suites.pairs.scoring.phrase_split` splits it), with the autograd graph."""
    where = {request: i for i, request in enumerate(tensors.requests)}
    values = tensors.rows[torch.arange(len(tensors.requests)), [ids[p] for ids, p in tensors.requests]]
    found = []
    for pair, ((enc1, pos1), (enc2, pos2)) in zip(pairs, tensors.plans):
        if pair.phrase_end is None or pair.direction == "antistereo":
            raise ValueError(f"pair {pair.pair_id}: the predicate term needs where its identity phrase ends")
        prefix = scorer.encode(pair.sent_more[:pair.phrase_end]).ids
        head = next((i for i, (a, b) in enumerate(zip(prefix, enc1.ids)) if a != b), min(len(prefix), len(enc1.ids)))
        kept = [(where[(enc1.ids, p1)], where[(enc2.ids, p2)]) for p1, p2 in zip(pos1, pos2, strict=True) if p1 >= head]
        found.append(sum((values[a] - values[b] for a, b in kept), values.new_zeros(())))
    return torch.stack(found)


def association_terms(c: torch.Tensor, groups: list[str], settings: ContrastConfig) -> torch.Tensor:
    """cell_term * mean over cells of c+^2 + group_term * mean over groups of (mean c of its cells)+^2, x+ =
    max(0, x) when one-sided: a cell, or a group whose cells average, at or below indifference adds nothing
    and receives no gradient. The group's mean is taken before the one-sided cut, so a group whose frames lean
    away from the stereotype on average is not pushed further by its frames that lean towards it."""
    side = torch.relu if settings.one_sided else (lambda x: x)
    loss = settings.cell_term * side(c).pow(2).mean()
    if settings.group_term:
        index: dict[str, list[int]] = {}
        for i, group in enumerate(groups):
            index.setdefault(group, []).append(i)
        means = torch.stack([c[rows].mean() for rows in index.values()])
        loss = loss + settings.group_term * side(means).pow(2).mean()
    return loss


def cell_associations(scorer: Scorer, batch: ContrastBatch, tensors: BatchTensors,
                      settings: ContrastConfig) -> torch.Tensor:
    """Each cell's c, in the order of `batch.cells` (`tensors` computed over `batch.pairs`): over the tokens
    `settings.tokens` names, the stereotype pairs' mean d, less the neutral pairs' with `reference: neutral`."""
    counts = [len(cell.stereotypes) for cell in batch.cells]
    stereotype_count = sum(counts)
    read = stereotype_count + sum(len(cell.neutral) for cell in batch.cells)
    d = predicate_terms(scorer, batch.pairs[:read], tensors) if settings.tokens == "predicate" else \
        tensors.more - tensors.less
    found, start, neutral = [], 0, stereotype_count
    for cell, count in zip(batch.cells, counts):
        c = d[start:start + count].mean()
        if settings.reference == "neutral":
            reference = d[neutral:neutral + len(cell.neutral)].mean()
            c = c - (reference if settings.move_reference else reference.detach())
        found.append(c)
        start, neutral = start + count, neutral + len(cell.neutral)
    return torch.stack(found)


def identity_anchor(scorer: Scorer, anchored: list[Pair], tensors: BatchTensors,
                    base_model: Callable[[], AbstractContextManager], top_k: int | None) -> torch.Tensor:
    """Mean over positions of KL(P_base || P_model) at every scored position from the identity words on, in both
    sentences of `anchored` (the batch's neutral and mined pairs): the model rows come from `tensors`, the base's
    from the same network with its adapter switched off. Averaged per position, not per document, so a long
    corpus sentence does not dilute the positions after a group's name."""
    base = base_batch(scorer, anchored, base_model)
    where = {request: i for i, request in enumerate(tensors.requests)}
    index = torch.tensor([where[request] for request in base.requests], dtype=torch.long, device=tensors.rows.device)
    # the model's rows by index: only the k columns compared are gathered with the graph, no copy of whole rows
    a, b = coarsened(tensors.rows, base.rows, top_k if top_k is not None else tensors.rows.shape[-1], index_a=index)
    return divergence(a, b, "kl").mean()


def contrast_loss(scorer: Scorer, batch: ContrastBatch, settings: ContrastConfig,
                  base_model: Callable[[], AbstractContextManager]) -> tuple[torch.Tensor, torch.Tensor]:
    """(the contrast terms, the identity-invariance anchor) of one batch, without their weights, from one pass
    over every pair of the batch (the anchor's base pass has no graph)."""
    pairs = batch.pairs
    tensors = batch_tensors(scorer, pairs, difference_only=True)
    c = cell_associations(scorer, batch, tensors, settings)
    loss = association_terms(c, [cell.group for cell in batch.cells], settings)
    anchored = pairs[sum(len(cell.stereotypes) for cell in batch.cells):]
    anchor = identity_anchor(scorer, anchored, tensors, base_model, settings.anchor_top_k) \
        if settings.anchor_term and anchored else loss.new_zeros(())
    return loss, anchor
