"""The model to train: base model, LoRA adapter (PEFT) or full weights, and probes of what its
forward does with a batch (loss normalisation, label shifting, packed documents).

LoRA targets are chosen per architecture; what is trained in full besides them and peft's task
type are the model family's (`Family.lora_modules_to_save`, `lora_task_type`: a masked LM's
head transform, since its decoder is tied to the input embeddings and never adapted).
"""

from __future__ import annotations

import logging
import os
import warnings

import torch
import torch.utils.checkpoint
from peft import LoraConfig, PeftModel, TaskType, get_peft_model
from transformers import set_seed

from queerbias.distributed import launch_number
from queerbias.errors import QueerbiasError
from queerbias.families import get_family
from queerbias.models import LoadedModel, load_model
from queerbias.models.languages import bind_language, run_language
from queerbias.models.loading import InspectedModel, inspect_model
from queerbias.train.config import TrainConfig

log = logging.getLogger(__name__)

_DECODER_PROJ = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
_BLOOM_LIKE = ("query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h")
_BERT_ATTENTION = ("query", "key", "value")

#: model_type -> LoRA target module names (attention and MLP projections of the decoder
#: blocks; attention only for encoders, whose head transform is trained in full)
LORA_TARGETS = {
    **dict.fromkeys(["llama", "mistral", "gemma", "gemma2", "gemma3", "gemma3_text", "qwen2",
                     "qwen3", "phi3"], _DECODER_PROJ),
    "gpt2": ("c_attn", "c_proj", "c_fc"),
    "opt": ("q_proj", "k_proj", "v_proj", "out_proj", "fc1", "fc2"),
    **dict.fromkeys(["bloom", "gpt_neox"], _BLOOM_LIKE),
    **dict.fromkeys(["bert", "roberta", "xlm-roberta", "camembert", "electra"], _BERT_ATTENTION),
    "distilbert": ("q_lin", "k_lin", "v_lin"),
    # XLM (and FlauBERT): attention projections and the feed-forward of every block
    **dict.fromkeys(["xlm", "flaubert"], ("q_lin", "k_lin", "v_lin", "out_lin", "lin1", "lin2")),
}
def inspect_base(config: TrainConfig) -> InspectedModel:
    """The base model's config, kind and tokenizer, as `load_base` loads it."""
    return inspect_model(config.model, kind=config.kind, dtype="float32", trust_remote_code=config.trust_remote_code,
                         allow_pickle_weights=config.allow_pickle_weights)


def load_base(config: TrainConfig, inspected: InspectedModel | None = None) -> LoadedModel:
    """The base model in float32 (mixed precision is the trainer's job), seeded first; `inspected`:
    what `inspect_base` found, so the tokenizer is not read twice (Gemma's 262k entries: seconds)."""
    set_seed(config.seed)
    lm = load_model(inspected or inspect_base(config))
    bind_language(lm.model, training_language(lm.model.config, config))
    if lm.tokenizer.pad_token_id is None:
        lm.tokenizer.pad_token = lm.tokenizer.eos_token
    lm.model.config.use_cache = False  # packed batches are only isolated per document without a cache
    return lm


def training_language(model_config, config: TrainConfig) -> str | None:
    """The language a model with language embeddings is trained with (`lang`, which it must know);
    None for other models."""
    return run_language(model_config, config.lang, None, where=f"{config.model} (config key 'lang')")


def check_adapter_modules(model: torch.nn.Module, config: TrainConfig) -> None:
    """The configured `lora.target_modules` and `lora.modules_to_save` must name modules of this model
    (as PEFT matches them: a module's name or its last components), the rank must fit the layers,
    and what training allocates must fit the memory (`check_memory`); told before the base is scored."""
    if config.method == "lora":
        found = [name for name, _ in model.named_modules()]
        for key in ("target_modules", "modules_to_save"):
            for i, wanted in enumerate(getattr(config.lora, key) or []):
                if not any(name == wanted or name.endswith("." + wanted) for name in found):
                    raise QueerbiasError(f"config key 'lora.{key}[{i}]': {model.config.model_type} has no module "
                                         f"{wanted!r}")
    check_memory(model, config)


def check_memory(model: torch.nn.Module, config: TrainConfig, available: int | None = None) -> None:
    """Refuse, before anything is allocated, a LoRA rank larger than a layer it adapts (the rank of
    the update is at most the smaller side of the layer's matrix) and a run whose trained parameters
    with their gradients and AdamW state (16 bytes each in float32; full fine-tuning: 12 beside the
    loaded weights; spread over the processes by FSDP or DeepSpeed) exceed the free memory of the
    device (`available` bytes: measured when None)."""
    if config.method == "lora":
        targets = config.lora.target_modules or list(LORA_TARGETS.get(model.config.model_type, ()))
        trained, per_param = 0, 16
        for name, module in model.named_modules():
            shape = _matrix_shape(module)
            if shape is None or not any(name == t or name.endswith("." + t) for t in targets):
                continue
            if config.lora.r > min(shape):
                raise QueerbiasError(f"config key 'lora.r' is {config.lora.r}, larger than the layer {name} it adapts "
                                     f"({shape[0]} × {shape[1]}); a rank of at most {min(shape)} can change it as "
                                     "much as any: lower lora.r")
            trained += config.lora.r * sum(shape)
        what = f"the adapter (rank {config.lora.r})"
    else:
        trained, per_param, what = sum(p.numel() for p in model.parameters()), 12, "full fine-tuning"
    needed = trained * per_param // _shards()
    device, free = _free_memory() if available is None else ("this machine", available)
    if free is not None and needed > free:
        raise QueerbiasError(f"{what} trains {trained:,} parameters, whose weights, gradients and AdamW state need "
                             f"at least {needed / 2**30:.2f} GiB, but {device} has {free / 2**30:.2f} GiB free; "
                             "lower lora.r or adapt fewer modules (lora.target_modules), or train on a machine with "
                             "more memory")


def _shards() -> int:
    """Over how many processes FSDP or DeepSpeed (launched by accelerate) spread the trained state."""
    sharded = any(os.environ.get(flag, "").lower() in ("1", "true")
                  for flag in ("ACCELERATE_USE_FSDP", "ACCELERATE_USE_DEEPSPEED"))
    return max(1, launch_number("WORLD_SIZE", 1)) if sharded else 1


def _matrix_shape(module: torch.nn.Module) -> tuple[int, int] | None:
    """(inputs, outputs) of a layer LoRA adapts: a linear layer, GPT-2's Conv1D, an embedding."""
    if isinstance(module, torch.nn.Linear):
        return module.in_features, module.out_features
    if isinstance(module, torch.nn.Embedding):
        return module.num_embeddings, module.embedding_dim
    if type(module).__name__ == "Conv1D" and getattr(module, "weight", None) is not None:
        return tuple(module.weight.shape)  # transformers' Conv1D keeps (in, out)
    return None


def _free_memory() -> tuple[str, int | None]:
    """The device training allocates on and its free bytes (None when unknown): the first GPU, else
    the memory the kernel says is available without swapping."""
    if torch.cuda.is_available():
        return "the GPU", torch.cuda.mem_get_info()[0]
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            fields = dict(line.split(":", 1) for line in meminfo if ":" in line)
        return "this machine", int(fields["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return "this machine", None


def attach_adapter(model: torch.nn.Module, config: TrainConfig, kind: str) -> torch.nn.Module:
    """Wrap in a LoRA adapter (seeded: its A matrices are random) or return as is for full FT."""
    if config.method == "full":
        return model
    lora = lora_config(model, config, kind)
    set_seed(config.seed)
    try:
        with warnings.catch_warnings():  # PEFT reads transformers' deprecated name; nothing for a user to change
            warnings.filterwarnings("ignore", "`is_gradient_checkpointing` is deprecated", FutureWarning)
            return get_peft_model(model, lora)
    except ValueError as err:
        raise QueerbiasError(f"LoRA setup failed for {model.config.model_type!r}: {err} (config "
                             "keys 'lora.target_modules' / 'lora.modules_to_save')") from err


def check_activation_checkpointing(model: torch.nn.Module, config: TrainConfig) -> None:
    """`activation_checkpointing` needs layers that transformers can recompute: some architectures cannot (XLM),
    and transformers would raise only when training starts, after the base is scored."""
    if config.activation_checkpointing and not getattr(model, "supports_gradient_checkpointing", False):
        raise QueerbiasError(f"config key 'activation_checkpointing': {type(model).__name__} cannot recompute its "
                             "layers in the backward pass (transformers does not support it for this architecture); "
                             "set it false")


def recompute_output_head(model: torch.nn.Module) -> None:
    """Run the model's output head (the LM head) under activation checkpointing whenever autograd records:
    transformers checkpoints the layers, not the head, and the head is what holds most. A large vocabulary's
    logits, and under bf16 autocast the head's weights cast anew in every pass (Gemma 3: 262k x 640, 335 MB, one
    copy kept for the backward pass of each graph), are recomputed in the backward pass from the head's input.
    Every caller gains, the trainer's corpus pass and the scorer's pair rows (`scoring.Scorer._states_at`) alike.
    Without a graph (the base passes, evaluation) the head runs as it is."""
    head = model.get_output_embeddings()
    forward = head.forward

    def recomputed(*args, **kwargs):
        if not torch.is_grad_enabled():
            return forward(*args, **kwargs)
        return torch.utils.checkpoint.checkpoint(forward, *args, use_reentrant=False, **kwargs)

    head.forward = recomputed


def lora_config(model: torch.nn.Module, config: TrainConfig, kind: str):
    """The PEFT LoraConfig for this model: targets per architecture, the family's modules trained in full and
    task type."""
    model_type, family = model.config.model_type, get_family(kind)
    targets = config.lora.target_modules or list(LORA_TARGETS.get(model_type, ()))
    if not targets:
        raise QueerbiasError(f"no default LoRA target modules for model type {model_type!r}; "
                             "set config key 'lora.target_modules'")
    to_save = config.lora.modules_to_save
    if to_save is None:
        to_save = family.lora_modules_to_save(model_type)
    return LoraConfig(r=config.lora.r, lora_alpha=config.lora.alpha,
                      lora_dropout=config.lora.dropout, target_modules=targets,
                      modules_to_save=to_save, bias="none",
                      task_type=TaskType(family.lora_task_type) if family.lora_task_type else None)


def scoring_view(model: torch.nn.Module) -> torch.nn.Module:
    """The transformers model inside a PEFT wrapper (adapter layers active), which the
    scorer can split into body and head; the model itself otherwise."""
    return model.get_base_model() if isinstance(model, PeftModel) else model


def honours_num_items_in_batch(model: torch.nn.Module) -> bool:
    """Whether the model's loss divides by a passed `num_items_in_batch`.

    transformers' Trainer assumes so for every model whose forward takes `**kwargs`,
    and then skips its own division by the accumulation steps. BertForMaskedLM takes
    `**kwargs` but ignores the count, so its loss (and gradients) would come out
    multiplied by the accumulation steps and world size. One probe forward tells.
    """
    ids = _probe_ids(model)
    with _evaluating(model):
        plain = model(input_ids=ids, labels=ids).loss
        counted = model(input_ids=ids, labels=ids, num_items_in_batch=torch.tensor(1)).loss
    return not torch.allclose(plain, counted)


def shifts_labels(model: torch.nn.Module) -> bool:
    """Whether the causal model's loss predicts `labels[t + 1]` from position t (GPT-2, OPT, BLOOM, Llama,
    ...), so that `labels = input_ids` trains next-token prediction; XLM's compares `logits[t]` with
    `labels[t]`, which would train it to copy its input. One probe forward tells; a loss that is neither
    is refused."""
    ids = _probe_ids(model)
    with _evaluating(model):
        output = model(input_ids=ids, labels=ids)
    logp = torch.log_softmax(output.logits[0].float(), dim=-1)
    next_token = -logp[:-1].gather(1, ids[0, 1:, None]).mean()
    same_position = -logp.gather(1, ids[0, :, None]).mean()
    loss = output.loss.float()
    if torch.allclose(loss, next_token, atol=1e-4):
        return True
    if torch.allclose(loss, same_position, atol=1e-4):
        return False
    raise QueerbiasError(f"{model.config.model_type}: its loss ({loss.item():.4f}) is neither the next-token nor "
                         "the same-position cross-entropy of its logits, so causal training cannot be set up")


def packs_documents(model: torch.nn.Module) -> bool:
    """Whether the causal model keeps documents apart in a padding-free packed row (position ids restarting
    at each document): the second document's logits must equal those of the document alone. Models whose
    attention ignores position ids (XLM, OPT, BLOOM, ...) would let it read the first."""
    ids = _probe_ids(model)
    positions = torch.cat([torch.arange(3), torch.arange(ids.shape[1] - 3)])[None].to(ids.device)
    with _evaluating(model):
        try:
            packed = model(input_ids=ids, position_ids=positions, use_cache=False).logits[0, 3:].float()
        except (TypeError, ValueError, RuntimeError):  # a model that takes no position ids
            return False
        alone = model(input_ids=ids[:, 3:], use_cache=False).logits[0].float()
    return bool(torch.allclose(packed, alone, atol=1e-4 * (1 + alone.abs().max().item())))


def _probe_ids(model: torch.nn.Module) -> torch.Tensor:
    vocab = model.config.vocab_size
    return (torch.arange(8, device=next(model.parameters()).device) * 7 + 3).remainder(vocab)[None]


class _evaluating:
    """The model in eval mode without gradients for a probe, put back as it was found."""

    def __init__(self, model: torch.nn.Module):
        self.model = model

    def __enter__(self):
        self.was_training = self.model.training
        self.model.eval()
        self.grad = torch.no_grad()
        self.grad.__enter__()

    def __exit__(self, *exc):
        self.grad.__exit__(*exc)
        self.model.train(self.was_training)
