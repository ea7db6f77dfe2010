"""Fixtures of the GIFI-DE tests: a real (tiny, random) sentiment classifier folder."""

import pytest
import torch


@pytest.fixture(scope="session")
def tiny_classifier(tiny_bert, tmp_path_factory):
    """A real (random) BERT sequence classifier with sentiment labels, saved as a folder."""
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    path = tmp_path_factory.mktemp("tiny-sentiment")
    labels = {0: "negative", 1: "neutral", 2: "positive"}
    config = BertConfig.from_pretrained(tiny_bert, num_labels=3, id2label=labels,
                                        label2id={v: k for k, v in labels.items()},
                                        architectures=["BertForSequenceClassification"])
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(path)
    AutoTokenizer.from_pretrained(tiny_bert).save_pretrained(path)
    return path
