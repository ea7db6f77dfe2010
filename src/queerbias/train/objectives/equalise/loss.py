"""The equalising loss: the benchmark's own score, differentiable, squared per pair and per group.

    L = lm_term * L_lm + weight * (pair_term * mean_i d_i^2 + group_term * mean_g (mean_{i in g} d_i)^2
                                   + sign_term * mean_g (mean_{i in g} tanh(d_i / temperature))^2
                                   + clp_term * CLP)

with d_i = s(sent_more_i) - s(sent_less_i), where s is the benchmark's own sentence score
(WinoQueer's shared-token sum: the masked variant for MLMs, the BOS-prepended causal sum
for CLMs), computed by the scorer itself (`Scorer.logprob_tensor`, the positions of
`suites.pairs.alignment`) with the autograd graph, so the loss optimises exactly what
`queerbias score` measures. CLP, the counterfactual pairing term (`equalise.pairing`),
compares the two sentences' whole next-token distributions at the same positions, a
signal over the vocabulary rather than over the template's own tokens. Why the group and
sign terms: equalise/config.py.

One-sided (`one_sided`, do no harm): every d_i above is replaced by max(0, d_i), and CLP
counts only the pairs with d_i > 0 (`clp_one_sided` may set that apart). A pair that prefers
the counterfactual adds nothing and receives no gradient; a pair that prefers the stereotype
is pulled back as far as indifference and no further (the square of max(0, d) is flat below
0). The symmetric terms also pull anti-stereotypical pairs up to 0, and the identity phrase's
shift they learn carries over to frames the run never saw, where the base preferred the
counterfactual: there it pushes whole groups across 50 into the stereotype (issue 32).

Shrunk (`keep`): every d_i above is measured from keep * d_base_i, the base model's own
preference for the pair (`shrunk_target`), so a pair is asked to shrink its preference, not to
lose it. Scaled (`residual_scale`): that residual is weighed by the size of the base preference
(`scaled_residual`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

import torch

from queerbias.models import LoadedModel
from queerbias.pairs.schema import Pair
from queerbias.scoring.config import ScoringConfig
from queerbias.scoring.scorer import Scorer, make_scorer, picked
from queerbias.suites.pairs.scoring import oriented_scores, pair_requests
from queerbias.train.modeling import scoring_view
from queerbias.train.objectives.equalise.config import EqualiseConfig
from queerbias.train.objectives.equalise.pairing import pairing_loss, pairing_requests


def equalise_loss(more: torch.Tensor, less: torch.Tensor, groups: list[str], pair_term: float,
                  group_term: float, sign_term: float = 0.0, temperature: float = 1.0,
                  one_sided: bool = False, target: torch.Tensor | None = None, flip_term: float = 0.0,
                  base: torch.Tensor | None = None, residual_scale: float | None = None) -> torch.Tensor:
    """pair_term * mean d^2 + group_term * mean over groups of (mean d in the group)^2
    + sign_term * mean over groups of (mean tanh(d / temperature) in the group)^2, with d
    measured from `target` (each pair's aim, `shrunk_target`; None: 0, indifference) and
    replaced by max(0, d) when `one_sided` (only a preference for the stereotype is penalised);
    + flip_term * mean of max(0, -sign(d_base) * d)^2, how far each pair's own preference has
    crossed 0 from the side the base model (`base`, d_base per pair) put it on. With
    `residual_scale` c, the score terms read d / sqrt(|d_base| + c) (`scaled_residual`)."""
    d = more - less
    flipped = torch.relu(-torch.sign(base) * d) if flip_term else None
    if target is not None:
        d = d - target
    if one_sided:
        d = torch.relu(d)
    if residual_scale is not None:
        d = scaled_residual(d, base, residual_scale)
    loss = pair_term * d.pow(2).mean()
    index: dict[str, list[int]] = {}
    for i, group in enumerate(groups):
        index.setdefault(group, []).append(i)
    for weight, values in ((group_term, d), (sign_term, torch.tanh(d / temperature))):
        if weight:
            means = torch.stack([values[rows].mean() for rows in index.values()])
            loss = loss + weight * means.pow(2).mean()
    if flipped is not None:
        loss = loss + flip_term * flipped.pow(2).mean()
    return loss


def scaled_residual(residual: torch.Tensor, base: torch.Tensor, scale: float) -> torch.Tensor:
    """residual / sqrt(|d_base| + scale), so its square is the residual's square over |d_base| + scale.
    Why: the shift that shrinks the largest preferences is mostly the identity phrase's offset, which
    every group shares to some degree; under the plain square a pair the base found near indifference
    resists that shift with a weight of 1 against a pair of 8 nats, so on frames the run never saw the
    near-indifferent groups are carried across 50 (issue 32: lesbian people and lgbtq on the contrary
    test frames). Weighed by the size of its own base preference, each pair counts by how far it moved
    relative to what it had."""
    return residual / (base.abs() + scale).sqrt()


def training_scorer(model: torch.nn.Module, tokenizer, kind: str) -> Scorer:
    """The reference scorer over the model being trained (its transformers view, adapter
    active). Built in eval mode: the body/head split is verified by comparing two forward
    passes, which dropout would make differ."""
    view = scoring_view(model)
    was_training = view.training
    view.eval()
    try:
        return make_scorer(LoadedModel("training", view, tokenizer, kind, fingerprint=""),
                           ScoringConfig())
    finally:
        view.train(was_training)


@dataclass(frozen=True)
class BatchTensors:
    """One forward pass over a pair batch: the benchmark's sentence scores and the
    next-token distributions they were read from (for the pairing term)."""

    more: torch.Tensor
    less: torch.Tensor
    rows: torch.Tensor
    plans: list
    requests: list


def batch_tensors(scorer: Scorer, pairs: list[Pair], difference_only: bool = False) -> BatchTensors:
    """s(sent_more), s(sent_less) (the positions, BOS handling and reduction of `score_pairs`,
    unrounded, with the autograd graph) and the log-probability rows behind them.
    `difference_only`: without the positions that add the same to both scores
    (`pair_requests`), which is all a loss on s_more - s_less needs."""
    plans, requests = pair_requests(scorer, pairs, difference_only)
    rows = scorer.distribution_tensor(requests)
    more, less = oriented_scores(scorer, pairs, plans, requests, picked(rows, [ids[p] for ids, p in requests]))
    return BatchTensors(more, less, rows, plans, requests)


def base_batch(scorer: Scorer, pairs: list[Pair], base_model: Callable[[], AbstractContextManager]) -> BatchTensors:
    """The batch under the base model (the adapter switched off by `base_model()`, no graph): its
    preference d_base, which `keep` shrinks, `residual_scale` weighs by and `flip_term` guards the
    sign of, and its rows, which `clp_reference: base` pairs the identity sentence with."""
    with torch.no_grad(), base_model():
        return batch_tensors(scorer, pairs, difference_only=True)


def shrunk_target(d_base: torch.Tensor, keep: float, one_sided: bool) -> torch.Tensor:
    """keep * d_base per pair, shrunk. One-sided, an anti-stereotypical d_base counts 0, so such a
    pair is never pushed further from the stereotype either. Why: the target 0 pulls every pair of
    a group by the same identity-phrase offset, which on frames the run never saw carries the group
    across 50; a target of the same sign as the base's preference asks to shrink it, not to move it."""
    return keep * (torch.relu(d_base) if one_sided else d_base)


def pair_loss(scorer: Scorer, pairs: list[Pair], settings: EqualiseConfig,
              base_model: Callable[[], AbstractContextManager] | None = None) -> torch.Tensor:
    """The bracketed pair loss of one batch (without the weight): the score terms on
    s(sent_more) - s(sent_less) (measured from `shrunk_target` with `keep`, which needs
    `base_model`) and the flip term (which needs it too), plus `clp_term` times the
    counterfactual pairing term (`equalise.pairing`) on the same forward pass's next-token
    distributions."""
    anchored = settings.clp_term and settings.clp_reference == "base"
    needs_base = settings.keep or settings.flip_term or settings.residual_scale is not None or anchored
    base = base_batch(scorer, pairs, base_model) if needs_base else None
    d_base = None if base is None else base.more - base.less
    reference = base.rows if anchored else None
    del base  # its vocabulary-wide rows, unless pairing reads them, are not held through the adapted pass
    target = shrunk_target(d_base, settings.keep, settings.one_sided) if settings.keep else None
    batch = batch_tensors(scorer, pairs, difference_only=True)
    loss = equalise_loss(batch.more, batch.less, [p.group for p in pairs], settings.pair_term,
                         settings.group_term, settings.sign_term, settings.temperature, settings.one_sided,
                         target, settings.flip_term, d_base, settings.residual_scale)
    if settings.clp_term:
        couples = pairing_requests(scorer.kind, batch.plans, settings.clp_positions)
        if settings.one_sided if settings.clp_one_sided is None else settings.clp_one_sided:
            # a pair preferring the counterfactual counts 0 (it stays in the mean's denominator)
            stereotypical = (batch.more - batch.less).detach() > 0
            couples = [found if keep else [] for found, keep in zip(couples, stereotypical.tolist(), strict=True)]
        loss = loss + settings.clp_term * pairing_loss(batch.rows, batch.requests, couples,
                                                       [p.direction for p in pairs], settings.clp_divergence,
                                                       settings.clp_top_k, reference)
    return loss
