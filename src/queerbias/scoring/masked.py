"""Masked-LM scoring: pseudo-log-likelihood by masking one position at a time.

Every masked variant across all requested sentences is built once, batched by
length under a token budget, and the LM head is applied only at the masked
position of each row.
"""

from __future__ import annotations

import torch

from queerbias.errors import QueerbiasError
from queerbias.scoring.batching import pad_right
from queerbias.scoring.encoding import Encoding
from queerbias.scoring.scorer import Request, Scorer, picked


class MaskedScorer(Scorer):
    kind = "masked"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.tokenizer.mask_token_id is None:
            raise QueerbiasError(f"{self.lm.spec} has no mask token; is it a masked LM?")

    def _split_model(self):
        # BERT's head is `cls`, RoBERTa's `lm_head`; XLM's is its output projection alone
        head = getattr(self.model, "cls", None) or getattr(self.model, "lm_head", None) \
            or self.model.get_output_embeddings()
        if head is None or self.model.base_model is self.model:
            return None
        return self.model.base_model, head

    def _mask_positions(self, encoding: Encoding, position: int) -> list[int]:
        """The position itself, plus the rest of its word under `within_word_l2r`."""
        if self.config.pll == "original":
            return [position]
        word = encoding.word_ids[position]
        if word is None:
            return [position]
        return [position] + [q for q in range(position + 1, len(encoding.ids))
                             if encoding.word_ids[q] == word]

    def _forward(self, requests: list[Request]) -> torch.Tensor:
        """Log-probability of each request's true token with its position masked."""
        return picked(self.distribution_tensor(requests), [ids[position] for ids, position in requests])

    def distribution_tensor(self, requests: list[Request]) -> torch.Tensor:
        """Log-softmax over the vocabulary at each request's position with that position masked,
        one row per request; keeps the autograd graph unless called under inference mode."""
        mask_id = self.tokenizer.mask_token_id
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        rows = []
        for ids, position in requests:
            masked = list(ids)
            for q in self._mask_positions(self._by_ids[ids], position):
                masked[q] = mask_id
            rows.append(masked)
        device = self.lm.device
        input_ids, attention = pad_right(rows, pad_id, device)
        where = torch.tensor([position for _, position in requests], device=device)
        return self._logits_at(input_ids, attention, torch.arange(len(requests), device=device), where)

    def _compute_logprobs(self, requests: list[Request]) -> dict[Request, float]:
        results: dict[Request, float] = {}

        def step(batch: list[int]) -> None:
            with torch.inference_mode():
                values = self._forward([requests[i] for i in batch]).tolist()
            for index, value in zip(batch, values):
                results[requests[index]] = value

        self.batch_size.run([len(ids) for ids, _ in requests], step)
        return results

