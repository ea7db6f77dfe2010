"""How many tokens a model accepts: the one lookup every suite and the trainer use.

A config's `max_position_embeddings` is the size of the position table, not always the number of
positions an input may use. RoBERTa-style embeddings (XLM-RoBERTa, CamemBERT, ...) number the
positions from `padding_idx + 1`, so `padding_idx + 1` rows are never reached by a token and an
input of `max_position_embeddings` tokens indexes past the table (`IndexError: index 130 is out of
bounds for dimension 1 with size 130` on a tiny XLM-RoBERTa). The model's own embedding module
says so: it is the one that creates position ids from the padding index. So the usable length
is read from the model (or, before its weights load, from a weightless copy of its modules).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import torch

log = logging.getLogger(__name__)

_UNBOUNDED = 10**9  # tokenizers without a real limit report ~1e30


@dataclass(frozen=True)
class ContextLimit:
    """The longest input in tokens (special tokens included) and where that number comes from."""

    tokens: int | None
    source: str = ""


def context_limit(model, tokenizer=None) -> ContextLimit:
    """The smallest of the model's usable positions (`usable_positions`), GPT-2's `n_positions` and the
    tokenizer's `model_max_length` where that is a real limit; `model` is a loaded model or anything
    with the model's `config` (`models.InspectedModel`)."""
    config = getattr(model, "config", None)
    found = [usable_positions(model), _limit(getattr(config, "n_positions", None), "n_positions"),
             _limit(getattr(tokenizer, "model_max_length", None), "the tokenizer's model_max_length")]
    found = [limit for limit in found if limit.tokens is not None]
    return min(found, key=lambda limit: limit.tokens) if found else ContextLimit(None)


def context_length(model, tokenizer=None) -> int | None:
    """The longest input in tokens that the model takes, or None (`context_limit`)."""
    return context_limit(model, tokenizer).tokens


def usable_positions(model) -> ContextLimit:
    """`max_position_embeddings` less the positions the model's embeddings never give a token: for an
    embedding module that numbers positions from its padding index (RoBERTa's
    `create_position_ids_from_input_ids`), `max_position_embeddings - padding_idx - 1`."""
    config = getattr(model, "config", None)
    declared = _limit(getattr(config, "max_position_embeddings", None), "max_position_embeddings")
    if declared.tokens is None:
        return declared
    for module in _modules(model):
        table = getattr(module, "position_embeddings", None)
        padding = getattr(module, "padding_idx", None)
        if hasattr(type(module), "create_position_ids_from_input_ids") and isinstance(table, torch.nn.Embedding) \
                and isinstance(padding, int) and not isinstance(padding, bool):
            usable = table.num_embeddings - padding - 1
            return ContextLimit(usable, f"max_position_embeddings {table.num_embeddings} less the {padding + 1} "
                                        f"positions up to its padding index {padding}, which "
                                        f"{type(module).__name__} never gives a token")
    return declared


def _limit(value, source: str) -> ContextLimit:
    return ContextLimit(int(value), source) if isinstance(value, int) and 0 < value < _UNBOUNDED \
        else ContextLimit(None)


def _modules(model):
    """The model's modules; for a config without weights, those of a copy built on the meta device
    (no memory, no weights), from the same classes the weights will load into."""
    if isinstance(model, torch.nn.Module):
        return model.modules()
    from transformers import AutoModel

    try:
        with torch.device("meta"):
            return AutoModel.from_config(model.config).modules()
    except Exception as err:  # noqa: BLE001  # an architecture transformers cannot build without its code
        log.info("cannot build %s's modules without weights (%s); its max_position_embeddings is taken as "
                 "the limit", getattr(model.config, "model_type", "the model"), err)
        return []
