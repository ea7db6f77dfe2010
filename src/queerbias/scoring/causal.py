"""Causal-LM scoring: one forward pass per distinct sentence.

The reference feeds the prefix before each scored token to the model again; a
causal model's logits at position p-1 of the full sentence are the same numbers,
so one pass serves every position. Batches are padded on the right (position
ids then match an unpadded pass) and the LM head runs only where a score is read.
"""

from __future__ import annotations

import torch

from queerbias.scoring.batching import pad_right
from queerbias.scoring.scorer import Request, Scorer, group_requests, picked


class _SoftcappedHead(torch.nn.Module):
    """LM head followed by Gemma-2/3 style final logit soft-capping."""

    def __init__(self, head: torch.nn.Module, cap: float):
        super().__init__()
        self.head, self.cap = head, cap

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.head(hidden) / self.cap) * self.cap


class CausalScorer(Scorer):
    kind = "causal"

    def _split_model(self):
        body, head = self.model.base_model, self.model.get_output_embeddings()
        if head is None or body is self.model:
            return None
        cap = getattr(self.model.config, "final_logit_softcapping", None)
        return body, (_SoftcappedHead(head, cap) if cap else head)

    def _distributions(self, wanted: list[tuple[tuple[int, ...], set[int]]]):
        """(requests, log-softmax rows over the vocabulary) of every wanted position of these
        sentences from one right-padded forward pass: the row of (ids, p) is the model's
        next-token distribution after ids[:p]. Keeps the autograd graph unless called under
        inference mode."""
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        input_ids, attention = pad_right([ids for ids, _ in wanted], pad_id, self.lm.device)
        rows, cols, keys = [], [], []
        for row, (ids, positions) in enumerate(wanted):
            for p in sorted(positions):
                rows.append(row)
                cols.append(p - 1)
                keys.append((ids, p))
        if not keys:
            return keys, None
        device = self.lm.device
        return keys, self._logits_at(input_ids, attention, torch.tensor(rows, device=device),
                                     torch.tensor(cols, device=device))

    def _forward(self, wanted: list[tuple[tuple[int, ...], set[int]]]):
        """(requests, log-probabilities of their true tokens), from `_distributions`."""
        keys, rows = self._distributions(wanted)
        if rows is None:
            return keys, torch.zeros(0, device=self.lm.device)
        return keys, picked(rows, [ids[p] for ids, p in keys])

    def _compute_logprobs(self, requests: list[Request]) -> dict[Request, float]:
        wanted = list(group_requests(requests).items())
        results: dict[Request, float] = {}

        def step(batch: list[int]) -> None:
            with torch.inference_mode():
                keys, values = self._forward([wanted[i] for i in batch])
            results.update(zip(keys, values.tolist()))

        self.batch_size.run([len(ids) for ids, _ in wanted], step)
        return results

    def distribution_tensor(self, requests: list[Request]) -> torch.Tensor:
        keys, rows = self._distributions(list(group_requests(requests).items()))
        order = {key: i for i, key in enumerate(keys)}
        return rows[torch.tensor([order[r] for r in requests], dtype=torch.long, device=rows.device)]
