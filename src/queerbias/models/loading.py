"""Load any model spec into (model, tokenizer, kind) ready for scoring.

A spec is a Hugging Face Hub id, a local folder, a PEFT adapter folder (its base
is resolved from `adapter_config.json`, the adapter applied and merged), or
`embedded:gemma-3-270m`. Weights load from safetensors only unless asked
otherwise, `trust_remote_code` is off unless asked for, and a model whose
checkpoint lacks weights (so that they would be silently random) is refused.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

import torch

from queerbias.distributed import process_state
from queerbias.errors import QueerbiasError
from queerbias.models.embedded import is_embedded, prepare_embedded
from queerbias.models.fingerprint import weights_fingerprint

log = logging.getLogger(__name__)

MASKED, CAUSAL = "masked", "causal"
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass
class LoadedModel:
    """A model ready for scoring, with what results must record about it."""

    spec: str
    model: torch.nn.Module
    tokenizer: object
    kind: str
    fingerprint: str
    source: dict = field(default_factory=dict)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def describe(self) -> dict:
        return {"spec": self.spec, "kind": self.kind, "fingerprint": self.fingerprint,
                "dtype": str(next(self.model.parameters()).dtype).removeprefix("torch."),
                **self.source}


def load_model(
    spec: str,
    kind: str | None = None,
    dtype: str = "float32",
    device: str | torch.device | None = None,
    trust_remote_code: bool = False,
    revision: str | None = None,
    allow_pickle_weights: bool = False,
) -> LoadedModel:
    """Load `spec`; `kind` ('masked'/'causal') overrides what the config says."""
    if dtype not in DTYPES:
        raise QueerbiasError(f"dtype must be one of {sorted(DTYPES)}, got {dtype!r}")
    found = _resolve(spec, kind, trust_remote_code, revision)
    model = _load_weights(found.base_path, found.kind, DTYPES[dtype], found.options, allow_pickle_weights)
    source = {"path": found.path, "revision": revision or getattr(found.config, "_commit_hash", None)}
    if found.adapter:
        model = _apply_adapter(model, found.path)
        source.update(base=found.base_path, adapter=found.path)
    tokenizer = _load_tokenizer(found.tokenizer_path, found.options)
    device = torch.device(device) if device else _default_device()
    model.to(device).eval()
    return LoadedModel(spec=spec, model=model, tokenizer=tokenizer, kind=found.kind,
                       fingerprint=weights_fingerprint(model), source=source)


def load_tokenizer(spec: str, kind: str | None = None, trust_remote_code: bool = False,
                   revision: str | None = None) -> tuple[object, str, str]:
    """(tokenizer, kind, where the tokenizer came from) of a spec, without loading weights."""
    found = _resolve(spec, kind, trust_remote_code, revision)
    return _load_tokenizer(found.tokenizer_path, found.options), found.kind, found.tokenizer_path


@dataclass(frozen=True)
class _Resolved:
    path: str
    adapter: dict | None
    base_path: str
    options: dict
    config: object
    kind: str

    @property
    def tokenizer_path(self) -> str:
        return self.path if self.adapter and _has_tokenizer(self.path) else self.base_path


def _resolve(spec: str, kind: str | None, trust_remote_code: bool, revision: str | None) -> _Resolved:
    """Folder, adapter, base, loading options, config and kind of a spec."""
    path = str(prepare_embedded(spec)) if is_embedded(spec) else spec
    adapter = _adapter_config(path)
    base_path = adapter["base_model_name_or_path"] if adapter else path
    options = dict(trust_remote_code=trust_remote_code, revision=None if adapter else revision)
    config = _load_config(base_path, options)
    kind = kind or detect_kind(config, base_path)
    if kind not in (MASKED, CAUSAL):
        raise QueerbiasError(f"kind must be {MASKED!r} or {CAUSAL!r}, got {kind!r}")
    return _Resolved(path, adapter, base_path, options, config, kind)


def detect_kind(config, where: str = "") -> str:
    """Masked or causal, from the architectures the config names (or its model type)."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

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


def _default_device() -> torch.device:
    return process_state().device


def _adapter_config(path: str) -> dict | None:
    file = Path(path) / "adapter_config.json"
    if not file.is_file():
        return None
    config = json.loads(file.read_text())
    if not config.get("base_model_name_or_path"):
        raise QueerbiasError(f"{file}: field 'base_model_name_or_path' is empty, so the base "
                             "model of this adapter is unknown")
    return config


def _has_tokenizer(path: str) -> bool:
    return (Path(path) / "tokenizer_config.json").is_file()


def _load_config(path: str, options: dict):
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(path, **options)
    except OSError as err:
        raise QueerbiasError(f"cannot load a model config from {path!r}: {err}. Is it a local "
                             "folder or a Hugging Face id (and are you online)?") from err


def _load_tokenizer(path: str, options: dict):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path, **options)
    tokenizer.padding_side = "right"  # Gemma's default is left; scoring assumes right
    return tokenizer


def _load_weights(path: str, kind: str, dtype, options: dict, allow_pickle: bool):
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

    auto = AutoModelForMaskedLM if kind == MASKED else AutoModelForCausalLM
    return load_checked_weights(auto, path, dtype, options, allow_pickle)


def load_checked_weights(auto, path: str, dtype, options: dict, allow_pickle: bool,
                         new_head: bool = False, **extra):
    """`auto.from_pretrained` from safetensors (pickle only when allowed), refusing a
    checkpoint that lacks weights of the class, which would otherwise be random.

    `new_head` accepts missing head weights on purpose (a base model about to be
    fine-tuned for classification, say).
    """
    try:
        model, info = auto.from_pretrained(path, dtype=dtype, output_loading_info=True,
                                           use_safetensors=None if allow_pickle else True,
                                           **options, **extra)
    except (OSError, ValueError) as err:
        hint = "" if allow_pickle else (" If the checkpoint only has pickle (.bin) weights "
                                        "and you trust it, pass --allow-pickle-weights.")
        raise QueerbiasError(f"cannot load weights from {path!r}: {err}.{hint}") from err
    missing = [k for k in info.get("missing_keys", []) if not k.endswith("position_ids")]
    mismatched = info.get("mismatched_keys", [])
    if (missing or mismatched) and not new_head:
        raise QueerbiasError(
            f"{path!r} does not hold all weights of a {auto.__name__} model: "
            f"{len(missing)} missing (e.g. {sorted(missing)[:3]}), {len(mismatched)} of the "
            "wrong shape. They would be random, and the results meaningless. Is this the right "
            "checkpoint (a base encoder without its head, say)?")
    return model


def _apply_adapter(model, adapter_path: str):
    from peft import PeftModel

    return PeftModel.from_pretrained(model, adapter_path).merge_and_unload()
