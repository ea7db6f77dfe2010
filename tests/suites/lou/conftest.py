"""A small hand-written Lou-format data folder (no shared data copied), and a tiny classifier."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_data import write_lou_folder


@pytest.fixture
def lou_dir(tmp_path) -> Path:
    return write_lou_folder(tmp_path / "lou-data")


@pytest.fixture(scope="session")
def tiny_classifier(tiny_bert, tmp_path_factory) -> Path:
    """A tiny random BertForSequenceClassification (2 labels) on the tiny BERT config and tokenizer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    path = tmp_path_factory.mktemp("tiny-bert-cls")
    config = BertConfig.from_pretrained(tiny_bert, num_labels=2,
                                        architectures=["BertForSequenceClassification"])
    torch.manual_seed(1)
    BertForSequenceClassification(config).save_pretrained(path)
    AutoTokenizer.from_pretrained(tiny_bert).save_pretrained(path)
    return path
