"""Causal-LM scoring: one forward pass per distinct sentence.

The reference feeds the prefix before each scored token to the model again; a
causal model's logits at position p-1 of the full sentence are the same numbers,
so one pass serves every position. Batches are padded on the right (position
ids then match an unpadded pass) and the LM head runs only where a score is read.
"""

from __future__ import annotations

import torch

from queerbias.errors import QueerbiasError
from queerbias.scoring.batching import pad_right
from queerbias.scoring.scorer import Encoding, Request, Scorer, group_requests


def causal_text(tokenizer, text: str, bos: str) -> str:
    """The string the reference scripts tokenise (without special tokens) for a causal LM:
    `bos_token + text` under bos=prepend (BOS as text), else the text itself."""
    if bos != "prepend":
        return text
    if tokenizer.bos_token is None:
        raise QueerbiasError(f"{tokenizer.name_or_path} has no BOS token to prepend; "
                             "use the scoring option bos=none")
    return tokenizer.bos_token + text


class _SoftcappedHead(torch.nn.Module):
    """LM head followed by Gemma-2/3 style final logit soft-capping."""

    def __init__(self, head: torch.nn.Module, cap: float):
        super().__init__()
        self.head, self.cap = head, cap

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.head(hidden) / self.cap) * self.cap


class CausalScorer(Scorer):
    kind = "causal"

    @staticmethod
    def tokenize(tokenizer, config, text: str, max_length: int | None) -> Encoding:
        encoded = tokenizer(causal_text(tokenizer, text, config.bos), add_special_tokens=False,
                            truncation=max_length is not None, max_length=max_length)
        ids = tuple(encoded["input_ids"])
        return Encoding(ids, tuple(range(1, len(ids))), tuple(encoded.word_ids()))

    def _split_model(self):
        body, head = self.model.base_model, self.model.get_output_embeddings()
        if head is None or body is self.model:
            return None
        cap = getattr(self.model.config, "final_logit_softcapping", None)
        return body, (_SoftcappedHead(head, cap) if cap else head)

    def _compute_logprobs(self, requests: list[Request]) -> dict[Request, float]:
        wanted = list(group_requests(requests).items())
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        results: dict[Request, float] = {}

        def step(batch: list[int]) -> None:
            sentences = [wanted[i][0] for i in batch]
            input_ids, attention = pad_right(sentences, pad_id, self.lm.device)
            rows, cols, targets, keys = [], [], [], []
            for row, index in enumerate(batch):
                ids, positions = wanted[index]
                for p in sorted(positions):
                    rows.append(row)
                    cols.append(p - 1)
                    targets.append(ids[p])
                    keys.append((ids, p))
            if not keys:
                return
            device = self.lm.device
            rows_t = torch.tensor(rows, device=device)
            with torch.inference_mode():
                logprobs = self._logits_at(input_ids, attention, rows_t,
                                           torch.tensor(cols, device=device))
                picked = logprobs[torch.arange(len(keys), device=device),
                                  torch.tensor(targets, device=device)].tolist()
            results.update(zip(keys, picked))

        self.batch_size.run([len(ids) for ids, _ in wanted], step)
        return results
