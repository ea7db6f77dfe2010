"""A small hand-written Lou-format data folder (no shared data copied), and a tiny classifier."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

STRATEGIES = ("Doppelnennung", "GenderStern", "GenderDoppelpunkt", "GenderGap", "Neutral", "De-e")

# (original, Doppelnennung, Stern, Doppelpunkt, Gap, Neutral, De-e), written for these tests
ROWS = [
    ("Die Lehrer haben gestreikt.", "Die Lehrerinnen und Lehrer haben gestreikt.", "Die Lehrer*innen haben gestreikt.",
     "Die Lehrer:innen haben gestreikt.", "Die Lehrer_innen haben gestreikt.", "Die Lehrkräfte haben gestreikt.",
     "De Lehrerne haben gestreikt."),
    ("Jeder Arzt hilft.", "Jede Ärztin und jeder Arzt hilft.", "Jede*r Ärzt*in hilft.", "Jede:r Ärzt:in hilft.",
     "Jede_r Ärzt_in hilft.", "Jede ärztliche Fachperson hilft.", "Jedey Arzte hilft."),
    ("Das Wetter ist schön.",) * 7,  # no person noun: every strategy equals the original
    ("Die Bürger wählen.", "Die Bürgerinnen und Bürger wählen.", "Die Bürger*innen wählen.", "Die Bürger:innen wählen.",
     "Die Bürger_innen wählen.", "Die Wahlberechtigten wählen.", "De Bürgerne wählen."),
    ("Der Kunde ist König.", "Die Kundin und der Kunde sind König.", "Der*die Kund*in ist König.",
     "Der:die Kund:in ist König.", "Der_die Kund_in ist König.", "Die Kundschaft ist König.", "De Kunde ist König."),
    ("Viele Politiker lügen.", "Viele Politikerinnen und Politiker lügen.", "Viele Politiker*innen lügen.",
     "Viele Politiker:innen lügen.", "Viele Politiker_innen lügen.", "Viele Politikschaffende lügen.",
     "Viele Politikerne lügen."),
]
LABELS = [1, 0, 0, 1, 0, 1]
TOPICS = ["Bildung", "Gesundheit", "Umwelt", "Demokratie", "Wirtschaft", "Politik"]


def _write_jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def write_lou_folder(root: Path) -> Path:
    for task in ("x-stance-de", "germeval-toxic"):
        records = []
        for texts, label, topic in zip(ROWS, LABELS, TOPICS, strict=True):
            record = {"label": label, "original": texts[0], **dict(zip(STRATEGIES, texts[1:], strict=True))}
            if task == "x-stance-de":
                record["topic"] = topic
            records.append(record)
        _write_jsonl(root / "lou" / f"{task}.jsonl", records)
    split = [{"text": texts[0], "label": label} for texts, label in zip(ROWS, LABELS, strict=True)]
    _write_jsonl(root / "tasks" / "germeval-toxic" / "train.jsonl", split * 2)
    _write_jsonl(root / "tasks" / "germeval-toxic" / "dev.jsonl", split)
    return root


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
