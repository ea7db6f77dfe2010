"""Writing a model folder (config and safetensors) from whichever process builds it.

transformers' `save_pretrained` writes nothing, silently, on any process but rank 0 once
torch.distributed is initialised (`should_save_on_this_rank`, transformers 5). The embedded
models are built into the cache by whichever process of an `accelerate launch` (or of a
multi-GPU lm-eval run) takes the build lock first, so with `save_pretrained` a rank-1 winner
left a folder holding only a tokenizer, marked complete. This writer has no rank check: it
writes what `from_pretrained` reads back, the same tensors under the same names.
"""

from __future__ import annotations

from pathlib import Path

from safetensors.torch import save_file

WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"


def save_model_folder(model, folder: Path) -> None:
    """Write `model`'s config, generation config and weights into `folder`, on any rank."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.config.save_pretrained(folder)
    if model.can_generate() and model.generation_config is not None:
        model.generation_config.save_pretrained(folder)
    tensors, stored = {}, set()
    for name, tensor in model.state_dict().items():
        where = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape))
        if where in stored:  # a tied weight (lm_head = embed_tokens): stored once, re-tied on loading
            continue
        stored.add(where)
        tensors[name] = tensor.detach().contiguous()
    save_file(tensors, folder / WEIGHTS_FILE, metadata={"format": "pt"})
