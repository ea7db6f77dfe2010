"""Tiny random BERT, GPT-2 and Llama models with tokenizers trained here, for offline tests.

They are saved as ordinary Hugging Face folders (safetensors), so tests exercise
the same loading code as real checkpoints.
"""

from __future__ import annotations

from pathlib import Path

import torch

CORPUS = [
    "Schwule Männer sind nett. Lesbische Frauen sind klug. Trans Frauen sind stark.",
    "Heterosexuelle Männer sind laut. Cis Frauen sind müde. Nicht-binäre Menschen lachen.",
    "Queere Menschen lesen gern. Bisexuelle Menschen können sich nicht entscheiden.",
    "Lukas ist schwul. Lukas ist hetero. Anna ist lesbisch. Anna ist hetero. Maß, Größe, Straße.",
    "Gay people are kind. Straight people are loud. James is very strong. Mary is very strong.",
    "Das ist ein kurzer Test, ob alles passt. Xier mag Kaffee. Dey liest ein Buch.",
    "Die Ärztin hilft. Der Arzt hilft. De Arzte hilft. Dier Ärzt*in hilft. Er sie es.",
]


def _corpus() -> list[str]:
    return CORPUS * 20


def build_tiny_bert(path: Path) -> Path:
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    trainer = BertWordPieceTokenizer(lowercase=True, strip_accents=False)
    trainer.train_from_iterator(_corpus(), vocab_size=300, min_frequency=1)
    path.mkdir(parents=True, exist_ok=True)
    trainer.save_model(str(path))
    tokenizer = BertTokenizer(vocab=str(path / "vocab.txt"), do_lower_case=True)
    assert len(tokenizer) > 100, "the WordPiece vocabulary was not loaded"
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=128, architectures=["BertForMaskedLM"])
    BertForMaskedLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def _byte_bpe(path: Path, bos: str, eos: str):
    """A byte-level BPE tokenizer trained on the corpus, with BOS/EOS and a pad token."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    trainer = ByteLevelBPETokenizer()
    trainer.train_from_iterator(_corpus(), vocab_size=400, min_frequency=1,
                                special_tokens=[bos, eos, "<pad>"])
    path.mkdir(parents=True, exist_ok=True)
    return PreTrainedTokenizerFast(tokenizer_object=trainer, bos_token=bos, eos_token=eos,
                                   pad_token="<pad>")


def build_tiny_gpt2(path: Path) -> Path:
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = _byte_bpe(path, "<|endoftext|>", "<|endoftext|>")
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=2, n_head=2,
                        n_positions=128, bos_token_id=tokenizer.bos_token_id,
                        eos_token_id=tokenizer.eos_token_id, architectures=["GPT2LMHeadModel"])
    GPT2LMHeadModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def build_tiny_llama(path: Path) -> Path:
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = _byte_bpe(path, "<s>", "</s>")
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, intermediate_size=64,
                         max_position_embeddings=128, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                         architectures=["LlamaForCausalLM"])
    LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
