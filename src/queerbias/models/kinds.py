"""Which model family a checkpoint is, what it may be used as, and a left-to-right attention that holds.

Most architectures say what they are: their class name ends as a family's LM heads do
(`Family.architecture_suffixes`: `...ForMaskedLM`, `...ForCausalLM`, `...LMHeadModel`), or transformers
knows their model type for one family (`Family.model_types`). XLM (and FlauBERT) have one LM class for
both objectives, `XLMWithLMHeadModel`, and their published configs do not tell them apart:
XLM-CLM-ENDE's says `causal: false` like XLM-MLM-ENDE's, because the original code passed causality at
call time. So for these types the kind comes from `causal: true` in the config (what a causal model
saved by us says), from the model card of a published checkpoint (`PUBLISHED_KINDS`), or from the user
(`--kind`, `kind:`), never from a guess; a `--kind` is accepted without `--force-kind` there.

A model used by a left-to-right family must not read later tokens, whatever its config says:
`for_kind` sets the flag each architecture reads before the weights load (XLM's `causal`, an encoder's
`is_decoder`), and `check_causal` refuses a loaded model whose logits still depend on later tokens.
"""

from __future__ import annotations

import copy

import torch

from queerbias.errors import QueerbiasError
from queerbias.families import CAUSAL, DUAL_KIND_TYPES, MASKED, families, get_family

_XLM_CLM = ("xlm-clm-ende-1024", "xlm-clm-enfr-1024")
_XLM_MLM = ("xlm-mlm-ende-1024", "xlm-mlm-enfr-1024", "xlm-mlm-enro-1024", "xlm-mlm-en-2048", "xlm-mlm-xnli15-1024",
            "xlm-mlm-tlm-xnli15-1024", "xlm-mlm-17-1280", "xlm-mlm-100-1280")
#: published checkpoints of those types (Hub ids, with and without the organisation) and the objective their
#: model cards name: "trained with CLM (Causal Language Modeling)" / "with a masked language modeling objective"
PUBLISHED_KINDS = {f"{org}{name}": kind for names, kind in ((_XLM_CLM, CAUSAL), (_XLM_MLM, MASKED))
                   for name in names for org in ("", "FacebookAI/")}


def detect_kind(config, where: str = "") -> str:
    """The family of the config (its architectures, then its model type); `where` is the spec, which for the
    dual-kind types may be a published checkpoint."""
    if config.model_type in DUAL_KIND_TYPES:
        return _dual_kind(config, where)
    for arch in getattr(config, "architectures", None) or []:
        found = _family_of_class(arch)
        if found:
            return found
    for family in families():
        if config.model_type in family.model_types:
            return family.name
    raise QueerbiasError(f"cannot tell whether {where or config.model_type} is a masked or a "
                         "causal LM; pass --kind masked or --kind causal")


def class_kind(model, where: str) -> str:
    """The family of a model the caller loaded: from its class's name, else as `detect_kind` (the dual-kind
    types always so)."""
    name = type(model).__name__
    if model.config.model_type in DUAL_KIND_TYPES:
        return detect_kind(model.config, where)
    return _family_of_class(name) or detect_kind(model.config, name)


def _family_of_class(name: str) -> str | None:
    return next((family.name for family in families() if name.endswith(family.architecture_suffixes)), None)


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
        decoder = "" if get_family(detected).left_to_right or config.model_type in DUAL_KIND_TYPES \
            else f", is_decoder {bool(config.is_decoder)}"
        raise QueerbiasError(
            f"{where} is a {detected} LM ({archs}{decoder}); scoring it as {requested} reads "
            f"probabilities it was not trained to give, so the bias figures would be wrong. "
            f"Drop --kind {requested}, or pass --force-kind if you mean it")
    if type(config) not in get_family(requested).auto_class._model_mapping:
        raise QueerbiasError(f"{where}: transformers has no {requested}-LM class for model type "
                             f"{config.model_type!r}; it can only be scored as {detected}")
    return requested


def for_kind(config, kind: str):
    """A copy of `config` whose model attends as the family `kind` needs: XLM's `causal` set to match, and an
    encoder (BERT, ...) used left to right made a decoder, so that no position reads a later one."""
    config = copy.deepcopy(config)
    left_to_right = get_family(kind).left_to_right
    if config.model_type in DUAL_KIND_TYPES:
        config.causal = left_to_right
    elif left_to_right and hasattr(config, "is_decoder") and not config.is_decoder and _encoder(config.model_type):
        config.is_decoder = True
    return config


def _encoder(model_type: str) -> bool:
    """Whether a family that reads the whole sentence (a masked LM's) has an LM head for this model type."""
    return any(model_type in family.model_types for family in families() if not family.left_to_right)


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
