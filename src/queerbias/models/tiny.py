"""`embedded:tiny`: a tiny causal LM built here, the same on every machine, for a one-minute try.

A Gemma 3 text model (the embedded Gemma's architecture: BOS, sliding and full attention,
tied embeddings, the same LoRA targets) two layers deep and 64 wide, with a tokenizer that
needs no training: every UTF-8 byte is one token (a byte-fallback BPE without merges), so
it reads any text and its vocabulary has one order. Its weights are drawn from torch's
generator seeded with 0, so two builds with the same torch are the same model (the same
weights fingerprint). The weights are random: its figures say nothing about bias; it shows
in seconds that a config, a suite or a study runs end to end (`configs/smoke-*.yaml`).
"""

from __future__ import annotations

from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, processors
from transformers import Gemma3ForCausalLM, Gemma3TextConfig, PreTrainedTokenizerFast

from queerbias.models.saving import save_model_folder

SPECIAL = ("<pad>", "<eos>", "<bos>", "<unk>")
SEED = 0


def build_tiny(folder: Path) -> None:
    """Write the tiny model and its tokenizer into `folder` (safetensors)."""
    vocabulary = {token: index for index, token in enumerate([*SPECIAL, *(f"<0x{b:02X}>" for b in range(256))])}
    backend = Tokenizer(models.BPE(vocab=vocabulary, merges=[], byte_fallback=True, unk_token="<unk>"))
    backend.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()])
    backend.post_processor = processors.TemplateProcessing(single="<bos> $A", special_tokens=[("<bos>", 2)])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="<pad>", eos_token="<eos>",
                                        bos_token="<bos>", unk_token="<unk>")
    config = Gemma3TextConfig(vocab_size=len(vocabulary), hidden_size=64, intermediate_size=128,
                              num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, head_dim=32,
                              max_position_embeddings=1024, sliding_window=512, layer_types=None,
                              pad_token_id=0, eos_token_id=1, bos_token_id=2, tie_word_embeddings=True,
                              architectures=["Gemma3ForCausalLM"])
    generator_state = torch.random.get_rng_state()
    try:
        torch.manual_seed(SEED)
        model = Gemma3ForCausalLM(config)
    finally:
        torch.random.set_rng_state(generator_state)  # a caller's random stream is left as it was
    save_model_folder(model, folder)
    tokenizer.save_pretrained(folder)
