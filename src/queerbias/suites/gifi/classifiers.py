"""Pluggable German sentiment and toxicity classifiers for SN and NTS.

Any Hugging Face sequence classifier works; its label names say what it predicts.
A model that cannot be loaded (not cached and downloads off, no such folder, no
usable labels) raises `Unavailable`, and the dimension is reported as not computed.
"""

from __future__ import annotations

import re

import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

NEGATIVE, NEUTRAL, POSITIVE = -1.0, 0.0, 1.0
_NON_TOXIC = re.compile(r"non|not|no_|neutral|normal|other|clean|ok", re.IGNORECASE)
_TOXIC = re.compile(r"toxic|offens|hate|insult|abus|harm", re.IGNORECASE)


class Unavailable(Exception):
    """A component could not be loaded; the message says why (shown in the report)."""


def load_pretrained(spec: str, auto_model, *, download: bool, device=None):
    """(model, tokenizer) from a local folder or the Hub cache; the Hub only with `download`."""
    try:
        tokenizer = AutoTokenizer.from_pretrained(spec, local_files_only=not download)
        model = auto_model.from_pretrained(spec, local_files_only=not download)
    except (OSError, ValueError) as err:
        hint = "" if download else " (not a local folder nor in the Hugging Face cache; allow downloads to fetch it)"
        raise Unavailable(f"cannot load {spec!r}{hint}: {str(err).splitlines()[0]}") from err
    return model.to(device or "cpu").eval(), tokenizer


class TextClassifier:
    """Scores texts with a sequence classifier: signed sentiment or toxicity probability.

    sentiment: like the reference's pipeline use, the top label decides the sign and
    its probability the size (+p positive, -p negative, 0 neutral), in [-1, 1].
    toxicity: the probability of the toxic label, in [0, 1] (sigmoid for
    multi-label models).
    """

    def __init__(self, spec: str, kind: str, *, download: bool = False, device=None,
                 toxic_label: str | None = None, max_length: int = 512):
        if kind not in ("sentiment", "toxicity"):
            raise ValueError(f"kind must be sentiment or toxicity, got {kind!r}")
        self.spec, self.kind, self.max_length = spec, kind, max_length
        self.model, self.tokenizer = load_pretrained(spec, AutoModelForSequenceClassification,
                                                     download=download, device=device)
        self.labels = {int(i): str(name) for i, name in self.model.config.id2label.items()}
        if kind == "sentiment":
            self.polarity = _polarities(spec, self.labels)
        else:
            self.toxic_index = _toxic_index(spec, self.labels, toxic_label)
        self.multi_label = self.model.config.problem_type == "multi_label_classification"

    def describe(self) -> dict:
        return {"model": self.spec, "kind": self.kind, "labels": [self.labels[i] for i in sorted(self.labels)]}

    def probabilities(self, texts: list[str], batch_size: int = 32) -> torch.Tensor:
        rows = []
        for start in range(0, len(texts), batch_size):
            batch = self.tokenizer(texts[start:start + batch_size], padding=True, truncation=True,
                                   max_length=self.max_length, return_tensors="pt").to(self.model.device)
            with torch.no_grad():
                logits = self.model(**batch).logits.float()
            rows.append(torch.sigmoid(logits) if self.multi_label else torch.softmax(logits, dim=-1))
        return torch.cat(rows).cpu()

    def score(self, texts: list[str], batch_size: int = 32) -> list[float]:
        probs = self.probabilities(texts, batch_size)
        if self.kind == "toxicity":
            return probs[:, self.toxic_index].tolist()
        top_p, top = probs.max(dim=-1)
        return [self.polarity[int(i)] * float(p) for p, i in zip(top_p, top, strict=True)]


def _polarities(spec: str, labels: dict[int, str]) -> dict[int, float]:
    polarity = {}
    for index, name in labels.items():
        lower = name.lower()
        polarity[index] = (POSITIVE if lower.startswith("pos") else NEGATIVE if lower.startswith("neg")
                           else NEUTRAL if lower.startswith("neu") else None)
    if None in polarity.values() or POSITIVE not in polarity.values() or NEGATIVE not in polarity.values():
        raise Unavailable(f"{spec!r} is no sentiment classifier with positive/negative(/neutral) "
                          f"labels: {sorted(labels.values())}")
    return polarity


def _toxic_index(spec: str, labels: dict[int, str], toxic_label: str | None) -> int:
    if toxic_label is not None:
        matches = [i for i, name in labels.items() if name == toxic_label]
    else:
        matches = [i for i, name in labels.items() if _TOXIC.search(name) and not _NON_TOXIC.search(name)]
    if len(matches) != 1:
        raise Unavailable(f"cannot tell the toxic label of {spec!r} among {sorted(labels.values())}; "
                          "name it with toxic_label")
    return matches[0]
