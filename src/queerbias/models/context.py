"""How many tokens a model accepts: the one lookup every suite and the trainer use."""

from __future__ import annotations

_UNBOUNDED = 10**9  # tokenizers without a real limit report ~1e30


def context_length(model, tokenizer=None) -> int | None:
    """The longest input in tokens (special tokens included) that the model declares, or None.

    The smallest of the config's position limit (`max_position_embeddings`, GPT-2's
    `n_positions`) and the tokenizer's `model_max_length` where that is a real limit.
    """
    config = getattr(model, "config", None)
    limits = [getattr(config, "max_position_embeddings", None), getattr(config, "n_positions", None),
              getattr(tokenizer, "model_max_length", None)]
    limits = [int(v) for v in limits if isinstance(v, int) and 0 < v < _UNBOUNDED]
    return min(limits) if limits else None
