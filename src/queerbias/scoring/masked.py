"""Masked-LM scoring: pseudo-log-likelihood by masking one position at a time.

Every masked variant across all requested sentences is built once, batched by
length under a token budget, and the LM head is applied only at the masked
position of each row.
"""

from __future__ import annotations

import torch

from queerbias.errors import QueerbiasError
from queerbias.scoring.batching import pad_right
from queerbias.scoring.scorer import Encoding, Request, Scorer


class MaskedScorer(Scorer):
    kind = "masked"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.tokenizer.mask_token_id is None:
            raise QueerbiasError(f"{self.lm.spec} has no mask token; is it a masked LM?")

    @staticmethod
    def tokenize(tokenizer, config, text: str, max_length: int | None) -> Encoding:
        # with [CLS]/[SEP], as tokenizer.encode in the reference; a cut keeps [SEP]
        encoded = tokenizer(text, truncation=max_length is not None, max_length=max_length)
        ids = tuple(encoded["input_ids"])
        special = tokenizer.get_special_tokens_mask(list(ids), already_has_special_tokens=True)
        scorable = tuple(i for i, s in enumerate(special) if not s)
        return Encoding(ids, scorable, tuple(encoded.word_ids()))

    def _split_model(self):
        head = getattr(self.model, "cls", None) or getattr(self.model, "lm_head", None)
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

    def _compute_logprobs(self, requests: list[Request]) -> dict[Request, float]:
        wanted = requests
        mask_id = self.tokenizer.mask_token_id
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        results: dict[Request, float] = {}

        def step(batch: list[int]) -> None:
            rows = []
            for index in batch:
                ids, position = wanted[index]
                masked = list(ids)
                for q in self._mask_positions(self._by_ids[ids], position):
                    masked[q] = mask_id
                rows.append(masked)
            input_ids, attention = pad_right(rows, pad_id, self.lm.device)
            where = torch.tensor([wanted[i][1] for i in batch], device=self.lm.device)
            targets = torch.tensor([wanted[i][0][wanted[i][1]] for i in batch],
                                   device=self.lm.device)
            row_index = torch.arange(len(batch), device=self.lm.device)
            with torch.inference_mode():
                logprobs = self._logits_at(input_ids, attention, row_index, where)
                picked = logprobs[row_index, targets].tolist()
            for index, value in zip(batch, picked):
                results[wanted[index]] = value

        self.batch_size.run([len(ids) for ids, _ in wanted], step)
        return results
