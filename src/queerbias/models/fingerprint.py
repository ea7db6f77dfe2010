"""A content fingerprint of loaded weights, so results name exactly what was scored.

Hashing every byte of a 7B model takes minutes; a strided sample of every tensor
(plus names, shapes and dtypes) takes milliseconds and still changes when any
fine-tuning step, merged adapter or different checkpoint changes the weights.
"""

from __future__ import annotations

import hashlib

import torch

SAMPLES_PER_TENSOR = 4096


def weights_fingerprint(model: torch.nn.Module) -> str:
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        flat = tensor.detach().reshape(-1)
        step = max(1, flat.numel() // SAMPLES_PER_TENSOR)
        sample = flat[::step][:SAMPLES_PER_TENSOR].to("cpu", torch.float32).contiguous()
        digest.update(f"{name}|{tuple(tensor.shape)}|{tensor.dtype}".encode())
        digest.update(sample.numpy().tobytes())
    return "sha256:" + digest.hexdigest()[:32]
