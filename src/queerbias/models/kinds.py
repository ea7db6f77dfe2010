"""Masked or causal: what a checkpoint is, what it may be used as, and a causal mask that holds.

Most architectures say what they are (`...ForMaskedLM`, `...ForCausalLM`, `...LMHeadModel`).
XLM (and FlauBERT) have one LM class for both objectives, `XLMWithLMHeadModel`, and their
published configs do not tell them apart: XLM-CLM-ENDE's says `causal: false` like
XLM-MLM-ENDE's, because the original code passed causality at call time. So for these types
the kind comes from `causal: true` in the config (what a causal model saved by us says), from
the model card of a published checkpoint (`PUBLISHED_KINDS`), or from the user (`--kind`,
`kind:`), never from a guess; a `--kind` is accepted without `--force-kind` there.

A model used as causal must not read later tokens, whatever its config says: `for_kind` sets the
flag each family reads before the weights load (XLM's `causal`, an encoder's `is_decoder`), and
`check_causal` refuses a loaded model whose logits still depend on later tokens.
"""

from __future__ import annotations

import copy

import torch

from queerbias.errors import QueerbiasError

MASKED, CAUSAL = "masked", "causal"
#: model types whose one LM class serves masked and causal LMs alike (`causal` in the config)
DUAL_KIND_TYPES = ("xlm", "flaubert")
_XLM_CLM = ("xlm-clm-ende-1024", "xlm-clm-enfr-1024")
_XLM_MLM = ("xlm-mlm-ende-1024", "xlm-mlm-enfr-1024", "xlm-mlm-enro-1024", "xlm-mlm-en-2048", "xlm-mlm-xnli15-1024",
            "xlm-mlm-tlm-xnli15-1024", "xlm-mlm-17-1280", "xlm-mlm-100-1280")
#: published checkpoints of those types (Hub ids, with and without the organisation) and the objective their
#: model cards name: "trained with CLM (Causal Language Modeling)" / "with a masked language modeling objective"
PUBLISHED_KINDS = {f"{org}{name}": kind for names, kind in ((_XLM_CLM, CAUSAL), (_XLM_MLM, MASKED))
                   for name in names for org in ("", "FacebookAI/")}


def detect_kind(config, where: str = "") -> str:
    """Masked or causal, from the config (its architectures, then its model type); `where` is the
    spec, which for the dual-kind types may be a published checkpoint."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    if config.model_type in DUAL_KIND_TYPES:
        return _dual_kind(config, where)
    for arch in getattr(config, "architectures", None) or []:
        if arch.endswith("ForMaskedLM"):
            return MASKED
        if arch.endswith(("ForCausalLM", "LMHeadModel")):
            return CAUSAL
    if config.model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        return MASKED
    if config.model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return CAUSAL
    raise QueerbiasError(f"cannot tell whether {where or config.model_type} is a masked or a "
                         "causal LM; pass --kind masked or --kind causal")


def _dual_kind(config, where: str) -> str:
    if getattr(config, "causal", False):
        return CAUSAL
    published = PUBLISHED_KINDS.get(where.strip("/"))
    if published:
        return published
    archs = ", ".join(getattr(config, "architectures", None) or [config.model_type])
    raise QueerbiasError(
        f"{where or config.model_type}: {archs} serves masked and causal LMs alike, and this checkpoint's config "
        "does not say which objective it was trained with (published causal checkpoints say causal: false too); "
        "pass --kind masked or --kind causal (kind: in a training config)")


def settle_kind(config, where: str, requested: str | None, force: bool) -> str:
    """The requested kind where the checkpoint allows it (or `force`), else the detected one.

    A kind the config cannot tell is taken as requested; one that contradicts what the config or
    a published checkpoint says is refused unless `force`."""
    try:
        detected = detect_kind(config, where)
    except QueerbiasError:
        if requested is None:
            raise
        return requested
    if requested is None or requested == detected:
        return detected
    if not force:
        archs = ", ".join(getattr(config, "architectures", None) or [config.model_type])
        decoder = "" if detected == CAUSAL or config.model_type in DUAL_KIND_TYPES \
            else f", is_decoder {bool(config.is_decoder)}"
        raise QueerbiasError(
            f"{where} is a {detected} LM ({archs}{decoder}); scoring it as {requested} reads "
            f"probabilities it was not trained to give, so the bias figures would be wrong. "
            f"Drop --kind {requested}, or pass --force-kind if you mean it")
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

    auto = AutoModelForMaskedLM if requested == MASKED else AutoModelForCausalLM
    if type(config) not in auto._model_mapping:
        raise QueerbiasError(f"{where}: transformers has no {requested}-LM class for model type "
                             f"{config.model_type!r}; it can only be scored as {detected}")
    return requested


def for_kind(config, kind: str):
    """A copy of `config` whose model attends as `kind` needs: XLM's `causal` set to match, and an
    encoder (BERT, ...) loaded as causal made a decoder, so that no position reads a later one."""
    config = copy.deepcopy(config)
    if config.model_type in DUAL_KIND_TYPES:
        config.causal = kind == CAUSAL
    elif kind == CAUSAL and hasattr(config, "is_decoder") and not config.is_decoder \
            and config.model_type in _masked_types():
        config.is_decoder = True
    return config


def _masked_types() -> set[str]:
    from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

    return set(MODEL_FOR_MASKED_LM_MAPPING_NAMES)


def make_causal(model: torch.nn.Module) -> None:
    """Set the flag a loaded dual-kind model reads at every call (XLM's `causal`), for models loaded
    by the caller; `check_causal` then tells whether that was enough."""
    if model.config.model_type in DUAL_KIND_TYPES:
        model.config.causal = True
        for module in model.modules():
            if isinstance(getattr(module, "causal", None), bool):
                module.causal = True


@torch.inference_mode()
def check_causal(model: torch.nn.Module, where: str) -> None:
    """Refuse a model used as causal whose logits at a position depend on later tokens: two inputs
    that differ only in their last tokens must give the same logits before them."""
    vocab = model.get_input_embeddings().num_embeddings
    device = next(model.parameters()).device
    first = (torch.arange(8, device=device) * 7 + 11).remainder(vocab)[None]
    second = first.clone()
    second[0, 4:] = (second[0, 4:] * 3 + 5).remainder(vocab)
    mask = torch.ones_like(first)
    was_training = model.training
    model.eval()
    try:
        a = model(input_ids=first, attention_mask=mask).logits[0, :4].float()
        b = model(input_ids=second, attention_mask=mask).logits[0, :4].float()
    finally:
        model.train(was_training)
    if (a - b).abs().max() > 1e-5 * (1 + a.abs().max()):
        raise QueerbiasError(f"{where}: used as a causal LM, its logits at a position still depend on later "
                             "tokens (it attends to the future), so every causal score would be wrong; load it "
                             "from its spec, which makes it attend causally, or score it as masked")
