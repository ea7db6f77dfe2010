"""The base anchor: on ordinary text the adapted model should predict what the base predicted.

The equalising terms act only on sentences that name an identity group; what they change
elsewhere shows up as general perplexity. Issue 20 suggests a KL-to-base term on
neutral text. Here that is the language-modelling batch the step already reads (the
corpus): KL(P_base || P_model) of the next-token distributions at every attended position,
averaged over positions. P_base is the same network with its LoRA adapter switched off
(`PeftModel.disable_adapter`), so no second copy of the model is held; full fine-tuning has
no such base and is refused by the config check. `top_k` coarsens both distributions as
the pairing term does (`pairing.coarsened`: a lower bound of the full divergence).
"""

from __future__ import annotations

import torch

from queerbias.train.objectives.equalise.pairing import coarsened, divergence


def base_logits(model: torch.nn.Module, inputs: dict) -> torch.Tensor:
    """The base model's logits on `inputs`: the adapter of a PEFT model switched off, no graph."""
    with torch.no_grad(), model.disable_adapter():
        return model(**{key: value for key, value in inputs.items() if key != "labels"}).logits


def anchor_loss(logits: torch.Tensor, base: torch.Tensor, attention_mask: torch.Tensor | None,
                top_k: int | None) -> torch.Tensor:
    """Mean over attended positions of KL(P_base || P_model) ([batch, length, vocabulary] logits)."""
    vocabulary = logits.shape[-1]
    model_rows = torch.log_softmax(logits.float(), -1).reshape(-1, vocabulary)
    with torch.no_grad():  # the base's logits serve nothing else: normalised in place, no second copy
        base_rows = base.float()
        base_rows -= torch.logsumexp(base_rows, -1, keepdim=True)
        base_rows = base_rows.reshape(-1, vocabulary)
    if attention_mask is not None and not attention_mask.bool().all():  # packed rows: every position kept
        keep = attention_mask.reshape(-1).bool()
        model_rows, base_rows = model_rows[keep], base_rows[keep]
    if top_k is not None:
        model_rows, base_rows = coarsened(model_rows, base_rows, top_k)
    return divergence(model_rows, base_rows, "kl").mean()
