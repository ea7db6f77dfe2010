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
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=128, architectures=["BertForMaskedLM"])
    return _save_random(BertForMaskedLM, config, tokenizer, path)


def _save_random(model_class, config, tokenizer, path: Path) -> Path:
    """`model_class(config)` initialised with seed 0, saved with its tokenizer."""
    torch.manual_seed(0)
    model_class(config).save_pretrained(path)
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
    config = GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=2, n_head=2,
                        n_positions=128, bos_token_id=tokenizer.bos_token_id,
                        eos_token_id=tokenizer.eos_token_id, architectures=["GPT2LMHeadModel"])
    return _save_random(GPT2LMHeadModel, config, tokenizer, path)


def build_tiny_llama(path: Path) -> Path:
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = _byte_bpe(path, "<s>", "</s>")
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, intermediate_size=64,
                         max_position_embeddings=128, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                         architectures=["LlamaForCausalLM"])
    return _save_random(LlamaForCausalLM, config, tokenizer, path)


def build_tiny_gemma(path: Path) -> Path:
    """A Gemma 3 text model with a SentencePiece-style tokenizer as Gemma's: spaces become '▁'
    and start the next token, byte fallback, and plain encoding adds <bos> (the model soft-caps
    its final logits, which the scorer must reproduce)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig, PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>"))
    backend.normalizer = normalizers.Replace(" ", "▁")
    backend.pre_tokenizer = pre_tokenizers.Split("▁", behavior="merged_with_next")
    backend.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    special = ["<pad>", "<eos>", "<bos>", "<unk>"]
    backend.train_from_iterator(_corpus(), trainers.BpeTrainer(
        vocab_size=500, special_tokens=special + [f"<0x{b:02X}>" for b in range(256)]))
    backend.post_processor = processors.TemplateProcessing(
        single="<bos> $A", special_tokens=[("<bos>", backend.token_to_id("<bos>"))])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<bos>", eos_token="<eos>",
                                        pad_token="<pad>", unk_token="<unk>")
    path.mkdir(parents=True, exist_ok=True)
    config = Gemma3TextConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2,
                              num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                              intermediate_size=64, max_position_embeddings=128, sliding_window=16,
                              final_logit_softcapping=30.0, pad_token_id=tokenizer.pad_token_id,
                              bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                              architectures=["Gemma3ForCausalLM"])
    return _save_random(Gemma3ForCausalLM, config, tokenizer, path)
