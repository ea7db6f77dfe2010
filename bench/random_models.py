"""Randomly initialised models of real architectures and sizes, for speed measurements.

Speed does not depend on the weights, so benchmarks build models from a config (no
download, nothing large to carry to a GPU machine) and save them as ordinary Hugging Face
folders, which then load through queerbias's own loader like any checkpoint.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import torch


def random_bert(folder: Path, texts: list[str], vocab_size: int = 30522, **sizes) -> Path:
    """A BertForMaskedLM (bert-base-uncased sizes unless `sizes` says otherwise) with an
    uncased WordPiece vocabulary trained on `texts`."""
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    trainer = BertWordPieceTokenizer(lowercase=True)
    trainer.train_from_iterator(texts, vocab_size=vocab_size, min_frequency=1)
    folder.mkdir(parents=True, exist_ok=True)
    trainer.save_model(str(folder))
    tokenizer = BertTokenizer(vocab=str(folder / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(0)
    # the full vocabulary size even when the text yields fewer pieces: bert-base has 30,522 rows
    config = BertConfig(vocab_size=max(vocab_size, len(tokenizer)), architectures=["BertForMaskedLM"], **sizes)
    BertForMaskedLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def random_causal(folder: Path, source: Path, **sizes) -> Path:
    """The causal LM whose config and tokenizer files are in `source` (Gemma 3 270M's, say),
    with random weights; `sizes` override config fields (a tiny version for smoke runs)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(source)
    for key, value in sizes.items():
        setattr(config, key, value)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.save_pretrained(folder)
    for file in source.iterdir():
        if file.name.startswith("tokenizer") or file.name == "special_tokens_map.json":
            shutil.copy2(file, folder / file.name)
    return folder
