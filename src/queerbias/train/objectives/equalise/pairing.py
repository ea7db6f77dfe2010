"""Counterfactual pairing: the two sentences of a pair should predict the same next tokens.

The score terms of `equalise` match s(sent_more) and s(sent_less), sums of the
log-probabilities of the benchmark's own tokens: a signal over a dozen tokens of one
template. Counterfactual logit pairing (Garg et al. 2019, "Counterfactual Fairness in
Text Classification through Robustness", Sec. 3) asks more: wherever the two sentences
share a token and the model's context already holds the swapped identity phrase, the
whole next-token distribution after it must not change. That is a signal over the
entire vocabulary at every such position, which is what a frame or a predicate the run
never saw also reads.

Positions: the aligned shared positions of `suites.pairs.alignment` (the benchmark's own). For
a causal LM only those after the first token where the sentences differ count (before
it both contexts are the same, and every divergence there is 0); for a masked LM every
shared position sees the whole sentence, so all count. `positions` keeps the first N per
pair, those nearest the identity phrase.

D per position, on log-probability rows a (sent_more's context) and b (sent_less's):
`js` = Jensen-Shannon divergence (symmetric, at most ln 2), `symmetric_kl` =
(KL(P_a||P_b) + KL(P_b||P_a)) / 2, `kl` = KL(P_b||P_a) (the identity sentence's
distribution pulled towards the counterfactual's, both receiving gradient). The term is
the mean over pairs of the sum over the pair's counted positions.

`top_k`: over a 262k-entry vocabulary (Gemma) the full-vocabulary divergence costs far
more than the forward pass it reads (16 s against under 1 s for 100 positions on one CPU
thread). With `top_k` = k the two distributions are first coarsened to the k tokens most
likely under either of them plus one outcome for all the rest. Merging outcomes never
increases an f-divergence, so this is a lower bound of the full divergence, equal to it
when the rest holds no probability; language-model distributions put nearly all their
mass on a few hundred tokens.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from queerbias.families import get_family

DIVERGENCES = ("js", "symmetric_kl", "kl")


def divergence(a: torch.Tensor, b: torch.Tensor, kind: str) -> torch.Tensor:
    """Row-wise divergence of two batches of log-probability rows ([n, vocabulary] -> [n])."""
    if kind == "kl":
        return (b.exp() * (b - a)).sum(-1)
    if kind == "symmetric_kl":
        return 0.5 * ((a.exp() - b.exp()) * (a - b)).sum(-1)
    if kind == "js":
        middle = torch.logsumexp(torch.stack([a, b]), dim=0) - math.log(2.0)
        return 0.5 * ((a.exp() * (a - middle)).sum(-1) + (b.exp() * (b - middle)).sum(-1))
    raise ValueError(f"unknown divergence {kind!r}; expected one of {DIVERGENCES}")


def coarsened(a: torch.Tensor, b: torch.Tensor, k: int, index_a: torch.Tensor | None = None,
              index_b: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows `index_a` of a and `index_b` of b (all rows where None; batches of log-probability rows)
    on the k tokens most likely under either, plus one outcome for the rest of the vocabulary
    ([n, vocabulary] -> [n, k + 1]). Only those k columns are gathered with the autograd graph, in
    one gather where a and b are the same rows, so the backward pass fills one buffer of a's size
    rather than one per copy of whole rows."""
    if index_a is not None or index_b is not None:  # the other's rows all, by its own count
        index_a = torch.arange(a.shape[0], device=a.device) if index_a is None else index_a
        index_b = torch.arange(b.shape[0], device=b.device) if index_b is None else index_b
    if k >= a.shape[-1]:
        return (a, b) if index_a is None else (a[index_a], b[index_b])
    with torch.no_grad():
        first, second = (a, b) if index_a is None else (a[index_a], b[index_b])
        chosen = torch.topk(torch.maximum(first, second, out=first if index_a is not None else None), k,
                            dim=-1).indices
        del first, second
    if a is b and index_a is not None:
        kept = a[torch.cat([index_a, index_b]).unsqueeze(-1), torch.cat([chosen, chosen])]
        kept_a, kept_b = kept[:len(index_a)], kept[len(index_a):]
    elif index_a is not None:
        kept_a, kept_b = a[index_a.unsqueeze(-1), chosen], b[index_b.unsqueeze(-1), chosen]
    else:
        kept_a, kept_b = a.gather(-1, chosen), b.gather(-1, chosen)
    return with_rest(kept_a), with_rest(kept_b)


def with_rest(kept: torch.Tensor) -> torch.Tensor:
    """Log-probabilities of the kept tokens, plus one outcome for all the others."""
    rest = torch.log1p(-kept.exp().sum(-1).clamp(max=1.0 - 1e-6))
    return torch.cat([kept, rest.unsqueeze(-1)], dim=-1)


def paired_positions(kind: str, first, second, limit: int | None = None) -> list[tuple[int, int]]:
    """The aligned (position in first, position in second) pairs whose distributions are compared.

    `first`/`second` are (encoding, scored positions) in the reference's order.
    """
    (enc1, pos1), (enc2, pos2) = first, second
    pairs = list(zip(pos1, pos2, strict=True))
    if get_family(kind).left_to_right:  # before the first difference both read the same context
        ids1, ids2 = enc1.ids, enc2.ids
        differ = next((i for i, (x, y) in enumerate(zip(ids1, ids2)) if x != y), min(len(ids1), len(ids2)))
        pairs = [(p1, p2) for p1, p2 in pairs if p1 > differ]
    return pairs[:limit] if limit is not None else pairs


def pairing_requests(kind: str, plans: list, limit: int | None) -> list[list[tuple]]:
    """Per pair, the (request in first, request in second) couples whose rows are compared."""
    couples = []
    for first, second in plans:
        (enc1, _), (enc2, _) = first, second
        couples.append([((enc1.ids, p1), (enc2.ids, p2))
                        for p1, p2 in paired_positions(kind, first, second, limit)])
    return couples


def pairing_loss(rows: torch.Tensor, requests: Sequence, couples: list[list[tuple]],
                 directions: Sequence[str], kind: str, top_k: int | None = None,
                 reference: torch.Tensor | None = None) -> torch.Tensor:
    """Mean over pairs of the summed divergence between the couples' rows.

    `rows[i]` is the log-probability row of `requests[i]`; `directions` orients each pair so
    that `a` is always sent_more's context (the reference's order swaps antistereo pairs).
    `reference`: rows of the same requests to read sent_less's side from instead (the base
    model's, without a graph; None: `rows`). A pair without a counted position contributes 0.
    """
    where = {request: i for i, request in enumerate(requests)}
    index_a, index_b, owner = [], [], []
    for number, (pair_couples, direction) in enumerate(zip(couples, directions, strict=True)):
        for first, second in pair_couples:
            more, less = (second, first) if direction == "antistereo" else (first, second)
            index_a.append(where[more])
            index_b.append(where[less])
            owner.append(number)
    if not owner:
        return rows.sum() * 0.0
    first, second = (torch.tensor(index, dtype=torch.long, device=rows.device) for index in (index_a, index_b))
    other = rows if reference is None else reference
    a, b = coarsened(rows, other, top_k if top_k is not None else rows.shape[-1], first, second)
    values = divergence(a, b, kind)
    per_pair = torch.zeros(len(couples), dtype=values.dtype, device=values.device)
    per_pair = per_pair.index_add(0, torch.tensor(owner, device=values.device), values)
    return per_pair.mean()
