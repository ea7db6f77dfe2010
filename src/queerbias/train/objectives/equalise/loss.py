"""The equalising loss: the benchmark's own score, differentiable, squared per pair and per group.

    L = L_lm + weight * (pair_term * mean_i d_i^2 + group_term * mean_g (mean_{i in g} d_i)^2
                         + sign_term * mean_g (mean_{i in g} tanh(d_i / temperature))^2)

with d_i = s(sent_more_i) - s(sent_less_i), where s is the benchmark's own sentence score
(WinoQueer's shared-token sum: the masked variant for MLMs, the BOS-prepended causal sum
for CLMs), computed by the scorer itself (`Scorer.logprob_tensor`, the positions of
`scoring.alignment`) with the autograd graph, so the loss optimises exactly what
`queerbias score` measures. Why the group and sign terms: equalise/config.py.
"""

from __future__ import annotations

import torch

from queerbias.models import LoadedModel
from queerbias.pairs.schema import Pair
from queerbias.scoring.config import ScoringConfig
from queerbias.scoring.families import make_scorer
from queerbias.scoring.pair_scores import pair_score_tensors
from queerbias.scoring.scorer import Scorer
from queerbias.train.modeling import scoring_view


def equalise_loss(more: torch.Tensor, less: torch.Tensor, groups: list[str], pair_term: float,
                  group_term: float, sign_term: float = 0.0, temperature: float = 1.0) -> torch.Tensor:
    """pair_term * mean d^2 + group_term * mean over groups of (mean d in the group)^2
    + sign_term * mean over groups of (mean tanh(d / temperature) in the group)^2."""
    d = more - less
    loss = pair_term * d.pow(2).mean()
    index: dict[str, list[int]] = {}
    for i, group in enumerate(groups):
        index.setdefault(group, []).append(i)
    for weight, values in ((group_term, d), (sign_term, torch.tanh(d / temperature))):
        if weight:
            means = torch.stack([values[rows].mean() for rows in index.values()])
            loss = loss + weight * means.pow(2).mean()
    return loss


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


def pair_loss(scorer: Scorer, pairs: list[Pair], settings) -> torch.Tensor:
    """The bracketed pair loss of one batch (without the weight)."""
    more, less = pair_score_tensors(scorer, pairs)
    return equalise_loss(more, less, [p.group for p in pairs], settings.pair_term,
                         settings.group_term, settings.sign_term, settings.temperature)
