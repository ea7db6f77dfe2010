"""`equalise`: language modelling plus a loss that makes the benchmark indifferent to identity.

    L = L_lm + weight * (pair_term * mean_i d_i^2 + group_term * mean_g (mean_{i in g} d_i)^2
                         [+ sign_term ...] + clp_term * CLP)

with d_i = s(sent_more_i) - s(sent_less_i), where s is the benchmark's own sentence score
(WinoQueer's shared-token sum: the masked variant for MLMs, the BOS-prepended causal sum
for CLMs), computed by the scorer itself (`Scorer.logprob_tensor`, the positions of
`scoring.alignment`) with the autograd graph, so the loss optimises exactly what
`queerbias score` measures. CLP, the counterfactual pairing term (`objectives.pairing`),
compares the two sentences' whole next-token distributions at the same positions, a
signal over the vocabulary rather than over the template's own tokens.

Why more than the per-pair square: within a group, every pair shares the identity
phrase's offset. The per-pair square mostly shrinks pair-level variation, so a smaller
offset of the same sign leaves the group's binary score at 0 or 100. The group term (the
squared mean over the group's pairs in the batch) targets that shared offset directly,
while pair-level variation - which a tie-free binary score needs, see `pair_outcome` -
may remain. The binary score reads the sign of d, i.e. where the group's median sits,
which a skewed group can leave off zero when its mean is zero; the sign term (an option
beyond the issue's formula) balances the group's mean of tanh(d / temperature), a robust
location between mean (large temperature) and median (small).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import Trainer

from queerbias.models import LoadedModel
from queerbias.pairs.schema import Pair
from queerbias.scoring.config import ScoringConfig
from queerbias.scoring.pair_scores import oriented_scores, pair_requests
from queerbias.scoring.scorer import Scorer, make_scorer, picked
from queerbias.train.objectives.pairing import pairing_loss, pairing_requests
from queerbias.train.objectives.pairs import PairBatches


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
    from queerbias.train.modeling import scoring_view

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


def batch_tensors(scorer: Scorer, pairs: list[Pair]) -> BatchTensors:
    """s(sent_more), s(sent_less) (the positions, BOS handling and reduction of `score_pairs`,
    unrounded, with the autograd graph) and the log-probability rows behind them."""
    plans, requests = pair_requests(scorer, pairs)
    rows = scorer.distribution_tensor(requests)
    more, less = oriented_scores(scorer, pairs, plans, requests, picked(rows, [ids[p] for ids, p in requests]))
    return BatchTensors(more, less, rows, plans, requests)


def pair_loss(scorer: Scorer, pairs: list[Pair], settings) -> torch.Tensor:
    """The bracketed pair loss of one batch (without the weight): the score terms on
    s(sent_more) - s(sent_less), plus `clp_term` times the counterfactual pairing term
    (`objectives.pairing`) on the same forward pass's next-token distributions."""
    batch = batch_tensors(scorer, pairs)
    loss = equalise_loss(batch.more, batch.less, [p.group for p in pairs], settings.pair_term,
                         settings.group_term, settings.sign_term, settings.temperature)
    if settings.clp_term:
        couples = pairing_requests(scorer.kind, batch.plans, settings.clp_positions)
        loss = loss + settings.clp_term * pairing_loss(batch.rows, batch.requests, couples,
                                                       [p.direction for p in pairs], settings.clp_divergence,
                                                       settings.clp_top_k)
    return loss


class EqualiseTrainer(Trainer):
    """`Trainer` whose loss adds the weighted pair loss of a seeded, balanced pair batch."""

    def __init__(self, *args, scorer: Scorer, batches: PairBatches, settings, process_index: int,
                 **kwargs):
        super().__init__(*args, **kwargs)
        self.scorer, self.batches, self.settings = scorer, batches, settings
        self.process_index = process_index
        self._micro = (-1, 0)  # (optimizer step, micro-batches drawn in it)
        self._pair_losses: list[torch.Tensor] = []  # detached; read when logged (no sync per step)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        result = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        lm_loss = result[0] if return_outputs else result
        step = self.state.global_step
        micro = self._micro[1] if self._micro[0] == step else 0
        self._micro = (step, micro + 1)
        pairs = self.batches.draw(step, micro, self.process_index)
        with self.accelerator.autocast():
            loss = pair_loss(self.scorer, pairs, self.settings)
        self._pair_losses.append(loss.detach())
        # The LM loss may already be normalised over the accumulated batch (num_items_in_batch);
        # the pair loss is a per-batch mean, so it then needs the division the trainer skips.
        scaled = self.loss_is_scaled_for_ga
        if scaled is None:
            scaled = (self.model_accepts_loss_kwargs and num_items_in_batch is not None) or \
                self.compute_loss_func is not None
        if scaled:
            loss = loss / self.current_gradient_accumulation_steps
        total = lm_loss + self.settings.weight * loss
        return (total, result[1]) if return_outputs else total

    def log(self, logs: dict, *args, **kwargs) -> None:
        if "loss" in logs and self._pair_losses:
            logs["pair_loss"] = round(torch.stack(self._pair_losses).float().mean().item(), 6)
            self._pair_losses = []
        super().log(logs, *args, **kwargs)
