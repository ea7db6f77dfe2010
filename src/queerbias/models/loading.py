"""Load any model spec into (model, tokenizer, kind) ready for scoring.

A spec is a Hugging Face Hub id, a local folder, a PEFT adapter folder (its base
is resolved from `adapter_config.json`, the adapter applied and merged), or
`embedded:gemma-3-270m`. Weights load from safetensors only unless asked
otherwise, `trust_remote_code` is off unless asked for, and a model whose
checkpoint lacks weights (so that they would be silently random) is refused.

Loading has two steps. `inspect_model` reads what is cheap (config, tokenizer, the
headers of local weight files) and refuses what cannot work: a folder without a
model, a truncated file, a masked LM asked to score as causal or the reverse
(`models.kinds`). Callers check their inputs against the tokenizer next, and only then
`load_model` reads the weights (`models.weights`: safetensors, the Hub's conversion, or
pickles read tensors-only), loads a causal LM so that it attends causally and checks
that it does, and binds `lang` for models with language embeddings (`models.languages`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import pickle
import struct
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors import SafetensorError
from transformers import AutoConfig, AutoTokenizer
from transformers.utils import logging as hf_logging

from queerbias.distributed import process_state
from queerbias.errors import QueerbiasError
from queerbias.families import get_family, names
from queerbias.fileio import read_text_utf8, regular_file
from queerbias.models.context import context_length
from queerbias.models.embedded import is_embedded, prepare_embedded
from queerbias.models.fingerprint import weights_fingerprint
from queerbias.models.kinds import check_causal, class_kind, for_kind, make_causal, settle_kind
from queerbias.models.languages import bind_language, bound_language, run_language
from queerbias.models.weights import WeightsSource, locate_weights, no_conversion_requests
from queerbias.records import loads_strict

log = logging.getLogger(__name__)

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

    @property
    def max_length(self) -> int | None:
        return context_length(self.model, self.tokenizer)

    @property
    def language(self) -> str | None:
        """The language passed as `langs` now (models with language embeddings; else None)."""
        return bound_language(self.model)

    def describe(self) -> dict:
        language = self.language
        return {"spec": self.spec, "kind": self.kind, "fingerprint": self.fingerprint,
                "dtype": str(next(self.model.parameters()).dtype).removeprefix("torch."),
                **({"lang": language} if language else {}), **self.source}


@dataclass
class InspectedModel:
    """A model spec resolved up to its weights: enough to check inputs before loading them."""

    spec: str
    path: str  # the folder or Hub id (the adapter's, for an adapter)
    base_path: str
    adapter: bool
    config: object
    kind: str
    tokenizer: object
    dtype: str
    options: dict  # trust_remote_code, revision
    allow_pickle_weights: bool
    device: str | torch.device | None = None
    lang: str | None = None  # the language bound at load (models with language embeddings)

    @property
    def max_length(self) -> int | None:
        return context_length(self, self.tokenizer)  # reads `config` as it would a model's


def inspect_model(
    spec: str,
    kind: str | None = None,
    dtype: str = "float32",
    trust_remote_code: bool = False,
    revision: str | None = None,
    allow_pickle_weights: bool = False,
    force_kind: bool = False,
    device: str | torch.device | None = None,
    lang: str | None = None,
) -> InspectedModel:
    """Config, kind and tokenizer of `spec`, without its weights.

    `kind` (a family: 'masked'/'causal') is needed only when the config does not tell; one that
    contradicts the architecture is refused unless `force_kind`. `lang`: the language a model
    with language embeddings is given (refused when it does not know it; ignored by others).
    """
    if dtype not in DTYPES:
        raise QueerbiasError(f"dtype must be one of {sorted(DTYPES)}, got {dtype!r}")
    _check_kind(kind)
    path = str(prepare_embedded(spec)) if is_embedded(spec) else spec
    _check_folder(path)
    adapter = _adapter_config(path)
    base_path = adapter["base_model_name_or_path"] if adapter else path
    if adapter:
        _check_folder(base_path)
    options = dict(trust_remote_code=trust_remote_code, revision=None if adapter else revision)
    config = _load_config(base_path, options)
    kind = settle_kind(config, base_path, kind, force_kind)
    lang = run_language(config, lang, None, where=spec) if lang else None
    tokenizer = _load_tokenizer(path if adapter and _has_tokenizer(path) else base_path, options)
    _check_vocabulary(tokenizer, getattr(config, "vocab_size", None), base_path)
    return InspectedModel(spec, path, base_path, bool(adapter), config, kind, tokenizer, dtype,
                          options, allow_pickle_weights, device, lang)


def load_model(spec: str | InspectedModel, **options) -> LoadedModel:
    """Load `spec` (or what `inspect_model` found; `options` are its arguments)."""
    found = spec if isinstance(spec, InspectedModel) else inspect_model(spec, **options)
    model, weights = load_weights(get_family(found.kind).auto_class, found.base_path, DTYPES[found.dtype], found.options,
                                  found.allow_pickle_weights, config=for_kind(found.config, found.kind))
    revision = weights.revision or found.options["revision"] or getattr(found.config, "_commit_hash", None)
    source = {"path": found.path, "revision": revision, "weights": weights.describe()}
    if found.adapter:
        _check_finite(model, found.base_path)  # the base's own weights are named as the base's
        model = _apply_adapter(model, found.path)
        source.update(base=found.base_path, adapter=found.path)
    device = torch.device(found.device) if found.device else _default_device()
    model.to(device).eval()
    _check_loaded(found, model)
    bind_language(model, found.lang)
    return LoadedModel(spec=found.spec, model=model, tokenizer=found.tokenizer, kind=found.kind,
                       fingerprint=weights_fingerprint(model), source=source)


def _check_loaded(found: InspectedModel, model: torch.nn.Module) -> None:
    """What only the weights tell, refused before anything is scored: NaN or infinite weights
    (found in one pass now, not after a chunk of scoring), a tokenizer with more tokens than
    the embedding has rows, and a context too short to score a sentence."""
    _check_finite(model, found.spec)
    embeddings = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    rows = getattr(embeddings, "num_embeddings", None)
    _check_vocabulary(found.tokenizer, rows, found.spec)
    limit = context_length(model, found.tokenizer)
    if limit is not None and limit < 3:
        raise QueerbiasError(f"{found.spec}: a context of {limit} positions cannot hold a sentence to score "
                             "(its config's max_position_embeddings or n_positions?)")
    if get_family(found.kind).left_to_right:
        check_causal(model, found.spec)


def _check_finite(model: torch.nn.Module, where: str) -> None:
    broken = non_finite_parameters(model)
    if broken:
        raise QueerbiasError(f"{where}: its weights hold NaN or infinity (e.g. {', '.join(broken)}), so it "
                             "gives NaN or infinite log-probabilities and its scores would be meaningless")


def caller_model(model, tokenizer, kind: str | None = None) -> LoadedModel:
    """A transformers language model and its tokenizer, as loaded by the caller (the Python API), ready to
    score: its family read from its class (then its config) unless `kind` says; a model of a left-to-right
    family made to attend so where a flag decides it (XLM's `causal`) and refused if it still reads later
    tokens. The weights are fingerprinted like a loaded spec's, so results record the same model."""
    name = type(model).__name__
    spec = getattr(model.config, "_name_or_path", "") or name
    kind = class_kind(model, spec) if kind is None else kind
    _check_kind(kind)
    if get_family(kind).left_to_right:
        make_causal(model)
        check_causal(model, spec)
    return LoadedModel(spec=spec, model=model, tokenizer=tokenizer, kind=kind, fingerprint=weights_fingerprint(model),
                       source={"loaded_by": "caller", "class": name})


def _check_kind(kind: str | None) -> None:
    if kind not in (None, *names()):
        raise QueerbiasError(f"kind must be {' or '.join(map(repr, names()))}, got {kind!r}")


def _check_vocabulary(tokenizer, rows: int | None, where: str) -> None:
    """A tokenizer whose ids go beyond the embedding would crash, or read rows another
    tokenizer's tokens were trained for."""
    if isinstance(rows, int) and len(tokenizer) > rows:
        raise QueerbiasError(f"{where}: the tokenizer has {len(tokenizer)} tokens but the model's embedding has "
                             f"{rows} rows, so ids from {rows} on have no embedding; is it the tokenizer of "
                             "this model?")


def non_finite_parameters(model: torch.nn.Module, limit: int = 3,
                          trainable_only: bool = False) -> list[str]:
    """Names of (up to `limit`) weight tensors holding NaN or infinity.

    One reduction over all tensors decides first (a single device sync, as this runs after
    every optimizer step); only a model that fails it is searched for the names.
    """
    tensors = [(name, tensor) for name, tensor in model.named_parameters()
               if tensor.is_floating_point() and (tensor.requires_grad or not trainable_only)]
    with torch.no_grad():
        if not tensors or bool(torch.stack([torch.isfinite(t).all() for _, t in tensors]).all()):
            return []
        return [name for name, tensor in tensors if not torch.isfinite(tensor).all()][:limit]


def _default_device() -> torch.device:
    return process_state().device


_INTEGER = ("I64", "I32", "I16", "I8", "U64", "U32", "U16", "U8", "BOOL")
_INTEGER_BUFFERS = ("position_ids", "token_type_ids", "num_batches_tracked")  # integer by design
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "tokenizer.model",
                    "spiece.model", "sentencepiece.bpe.model", "merges.txt", "special_tokens_map.json")


def _check_folder(path: str) -> None:
    """A local path must be a folder holding a loadable model; say what is wrong if not.

    Hub ids pass through. Weight files are checked only by their headers (cheap), so
    a truncated download is named here rather than failing deep inside loading.
    """
    folder = Path(path).expanduser()
    if not folder.exists():
        if path.startswith((".", "/", "~")) or path.count("/") > 1:  # Hub ids are org/name
            raise QueerbiasError(f"{path}: no such model folder (nor a Hugging Face id)")
        return  # a Hub id
    if not folder.is_dir():
        raise QueerbiasError(f"{path}: is a file; give the model's folder (config.json and "
                             "*.safetensors), a Hub id or embedded:gemma-3-270m")
    names = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
    for name in names:  # open() on a FIFO blocks forever; a device can be endless
        if not (folder / name).is_dir():
            regular_file(folder / name, "a file of a model folder")
    if not names:
        raise QueerbiasError(f"{path}: the folder is empty; expected a model saved with "
                             "save_pretrained (config.json and *.safetensors)")
    if "adapter_config.json" in names:
        return
    if "config.json" not in names:
        what = ("only a tokenizer" if any(n in _TOKENIZER_FILES for n in names)
                else f"no model ({', '.join(names[:5])}{', ...' if len(names) > 5 else ''})")
        raise QueerbiasError(f"{path}: holds {what} but no config.json; give the folder "
                             "that save_pretrained wrote for the model")
    weights = sorted(folder.glob("*.safetensors"))
    if not weights and not any(n.endswith((".bin", ".pt", ".pth")) for n in names):
        raise QueerbiasError(f"{path}: holds a config.json but no weights (*.safetensors); give "
                             "the folder that save_pretrained wrote for the model")
    for file in weights:
        _check_safetensors(file)


def _check_safetensors(path: Path) -> None:
    """Refuse a safetensors file shorter than its header says (a cut-off download or copy)."""
    size = path.stat().st_size
    with open(path, "rb") as handle:
        head = handle.read(8)
        length = struct.unpack("<Q", head)[0] if len(head) == 8 else None
        if length is None or length > size - 8:
            raise QueerbiasError(f"{path}: truncated or not a safetensors file ({size} bytes, "
                                 "its header is incomplete); download or save it again")
        try:
            header = json.loads(handle.read(length))
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise QueerbiasError(f"{path}: not a safetensors file (unreadable header); "
                                 "download or save it again") from None
    if not isinstance(header, dict):
        raise QueerbiasError(f"{path}: not a safetensors file (its header is no JSON object)")
    integer = [name for name, entry in header.items() if name != "__metadata__" and entry.get("dtype") in _INTEGER
               and not name.endswith(_INTEGER_BUFFERS)]
    if integer:
        raise QueerbiasError(f"{path}: the weight {integer[0]} is stored as {header[integer[0]]['dtype']} "
                             "(integers); loading would cast it to floating point and the model would be "
                             "meaningless; save the model again with floating-point weights")
    ends = [entry["data_offsets"][1] for name, entry in header.items() if name != "__metadata__"]
    needed = 8 + length + max(ends, default=0)
    if size < needed:
        raise QueerbiasError(f"{path}: truncated: {size} bytes where its header promises "
                             f"{needed}; download or save it again")


def _adapter_config(path: str) -> dict | None:
    file = Path(path) / "adapter_config.json"
    if not file.exists():
        return None
    try:
        config = loads_strict(read_text_utf8(file, "adapter config"))
    except ValueError as err:  # broken JSON, a repeated key, NaN
        raise QueerbiasError(f"{file}: not a valid adapter config ({err})") from None
    if not isinstance(config, dict):
        raise QueerbiasError(f"{file}: an adapter config must be a JSON object, got {type(config).__name__}")
    if not isinstance(config.get("base_model_name_or_path"), str) or not config["base_model_name_or_path"]:
        raise QueerbiasError(f"{file}: field 'base_model_name_or_path' is empty, so the base "
                             "model of this adapter is unknown")
    return config


def _has_tokenizer(path: str) -> bool:
    return (Path(path) / "tokenizer_config.json").is_file()


def _load_config(path: str, options: dict):
    try:
        return AutoConfig.from_pretrained(path, **options)
    except OSError as err:
        if Path(path).expanduser().is_dir():
            raise QueerbiasError(f"{path}: cannot read its config.json: "
                                 f"{str(err).splitlines()[0]}") from err
        raise QueerbiasError(f"cannot load a model config from {path!r}: {err}. Is it a local "
                             "folder or a Hugging Face id (and are you online)?") from err
    except ValueError as err:  # a config.json naming no model type transformers knows
        raise QueerbiasError(f"{path}: {str(err).splitlines()[0]}") from err


def _load_tokenizer(path: str, options: dict):
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, **options)
    except (OSError, ValueError, TypeError) as err:
        raise QueerbiasError(f"{path}: cannot load its tokenizer ({str(err).splitlines()[0]}); "
                             "save the tokenizer beside the model (tokenizer.save_pretrained)") from err
    tokenizer.padding_side = "right"  # Gemma's default is left; scoring assumes right
    return tokenizer


def load_checked_weights(auto, path: str, dtype, options: dict, allow_pickle: bool,
                         new_head: bool = False, **extra):
    """The model of `load_weights`, without where its weights came from."""
    return load_weights(auto, path, dtype, options, allow_pickle, new_head, **extra)[0]


def load_weights(auto, path: str, dtype, options: dict, allow_pickle: bool,
                 new_head: bool = False, **extra) -> tuple[torch.nn.Module, WeightsSource]:
    """`auto.from_pretrained` from safetensors (or what `models.weights` finds instead), refusing a
    checkpoint that lacks weights of the class, which would otherwise be random; returns the model
    and where its weights came from.

    `new_head` accepts missing head weights on purpose (a base model about to be
    fine-tuned for classification, say).
    """
    weights = locate_weights(path, options.get("revision"), allow_pickle)
    try:
        with no_conversion_requests(), quiet_transformers():
            model, info = auto.from_pretrained(path, dtype=dtype, output_loading_info=True,
                                               **{**options, **weights.load_options()}, **extra)
    except pickle.UnpicklingError as err:  # torch.load(weights_only=True) met more than tensors
        unsafe = next((line.strip() for line in str(err).splitlines() if "Unsupported global" in line), "")
        raise QueerbiasError(f"cannot load weights from {path!r}: its pickle holds more than tensors ({unsafe}); "
                             "unpickling it could run code, so it is refused") from None
    except (OSError, ValueError, RuntimeError, SafetensorError) as err:  # RuntimeError: a weight of another shape
        message = str(err).splitlines()[0].rstrip(".")
        pickle_only = "pytorch_model.bin" in str(err) or "safetensors" in message.lower()
        hint = (" If the checkpoint only has pickle (.bin) weights and you trust it, pass "
                "--allow-pickle-weights." if pickle_only and not allow_pickle else "")
        raise QueerbiasError(f"cannot load weights from {path!r}: {message}.{hint}") from err
    missing = [k for k in info.get("missing_keys", []) if not k.endswith("position_ids")]
    mismatched = info.get("mismatched_keys", [])
    if (missing or mismatched) and not new_head:
        raise QueerbiasError(
            f"{path!r} does not hold all weights of a {auto.__name__} model: "
            f"{len(missing)} missing (e.g. {sorted(missing)[:3]}), {len(mismatched)} of the "
            "wrong shape. They would be random, and the results meaningless. Is this the right "
            "checkpoint (a base encoder without its head, say)?")
    return model, weights


@contextlib.contextmanager
def quiet_transformers():
    """transformers' own bars (`Loading weights` on every load, so on every `qb.score`) switched off for the
    block; a download's bar (huggingface_hub's) still shows."""
    set_hook = getattr(hf_logging, "set_tqdm_hook", None)  # transformers 5.x
    if set_hook is None:
        yield
        return
    previous = set_hook(lambda factory, args, kwargs: factory(*args, **{**kwargs, "disable": True}))
    try:
        yield
    finally:
        set_hook(previous)


def _apply_adapter(model, adapter_path: str):
    """The adapter merged into its base; PEFT's errors (a config it cannot read, weights of
    the wrong shape for this base, modules the base lacks) become one line."""
    from peft import PeftModel  # seconds to import: only for an adapter

    try:
        return PeftModel.from_pretrained(model, adapter_path).merge_and_unload()
    except (OSError, ValueError, RuntimeError, KeyError, TypeError, AttributeError, SafetensorError) as err:
        message = " ".join(str(err).split())[:300]
        raise QueerbiasError(f"{adapter_path}: cannot apply the adapter to its base ({type(err).__name__}: "
                             f"{message}); is it an adapter of this base model?") from None
