"""Batched, seeded sampling from a causal LM with left padding.

Decoder-only models continue from the last position, so a batch is padded on the
left. The loader sets the tokenizer to right padding (what scoring needs); this
module never touches the tokenizer and pads token ids itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from tqdm.auto import tqdm

from queerbias.errors import QueerbiasError
from queerbias.families import get_family
from queerbias.models.context import context_length


@dataclass(frozen=True)
class Decoding:
    temperature: float = 0.95
    top_p: float = 0.95
    top_k: int = 0
    max_new_tokens: int = 200

    def generate_kwargs(self) -> dict:
        if self.temperature == 0:
            return {"do_sample": False, "max_new_tokens": self.max_new_tokens}
        return {"do_sample": True, "temperature": self.temperature, "top_p": self.top_p,
                "top_k": self.top_k, "max_new_tokens": self.max_new_tokens}


def left_pad(sequences: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids and attention mask, shorter sequences padded on the left."""
    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, seq in enumerate(sequences):
        if seq:
            ids[row, width - len(seq):] = torch.tensor(seq, dtype=torch.long)
            mask[row, width - len(seq):] = 1
    return ids, mask


def generate(lm, prompts: list[str], decoding: Decoding, *, seed: int, batch_size: int = 16,
             progress: bool = True, desc: str = "generating") -> list[str]:
    """One continuation per prompt (the prompt itself excluded), in prompt order.

    The global torch generator is seeded once; batches then run in order, so the
    outputs are reproducible for a given seed, batch size and device.
    """
    if not get_family(lm.kind).left_to_right:
        raise QueerbiasError(f"GIFI generates text and needs a causal LM; {lm.spec} is {lm.kind}")
    tokenizer = lm.tokenizer
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    if pad_id is None:
        raise QueerbiasError(f"{lm.spec}: the tokenizer has neither a pad nor an eos token")
    encoded = [tokenizer(p)["input_ids"] for p in prompts]
    _check_context(lm, max(map(len, encoded), default=0) + decoding.max_new_tokens)
    torch.manual_seed(seed)
    outputs: list[str] = []
    starts = range(0, len(prompts), batch_size)
    for start in tqdm(starts, desc=desc, unit="batch", disable=not progress):
        ids, mask = left_pad(encoded[start:start + batch_size], pad_id)
        with torch.no_grad():
            generated = lm.model.generate(input_ids=ids.to(lm.device), attention_mask=mask.to(lm.device),
                                          pad_token_id=pad_id, **decoding.generate_kwargs())
        outputs.extend(tokenizer.batch_decode(generated[:, ids.shape[1]:], skip_special_tokens=True))
    return outputs


def _check_context(lm, needed: int) -> None:
    """Refuse prompts the model cannot see whole: cutting them would change the task."""
    limit = context_length(lm.model)
    if limit is not None and needed > limit:
        raise QueerbiasError(f"{lm.spec} sees at most {limit} tokens, but the longest prompt plus "
                             f"max_new_tokens needs {needed}; lower max_new_tokens or shorten the prompts")
