"""Training text -> token sequences -> batches, for masked and causal objectives.

Sources are a `queerbias corpus build` folder (train.jsonl / validation.jsonl), any JSONL
file with a text field, or a Hugging Face dataset (`hf:NAME`). Documents longer than
`max_length` are cut into consecutive chunks, never dropped. Causal LMs can pack short
documents padding-free: consecutive documents share one example, and the batch is
flattened into one row whose position ids restart at every document, which the model's
attention turns into a block-diagonal mask (with `use_cache=False`), so no document
attends to another.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch
from transformers import DataCollatorForLanguageModeling, DataCollatorWithFlattening

from queerbias.errors import DataError, QueerbiasError
from queerbias.fileio import iter_jsonl

if TYPE_CHECKING:  # train.config reads training pairs through this module (train.pairs)
    from queerbias.train.config import DataSettings

HF_PREFIX = "hf:"
GENERAL_TEXT = "data/neutral_de/neutral_de.jsonl"


def resolve_validation(settings: DataSettings) -> str | None:
    """The validation source: explicit, validation.jsonl beside a corpus folder, or the HF split."""
    if settings.validation:
        return settings.validation
    if settings.train.startswith(HF_PREFIX):
        return settings.train
    folder = Path(settings.train)
    if folder.is_dir() and (folder / "validation.jsonl").is_file():
        return str(folder / "validation.jsonl")
    return None


def read_texts(spec: str, settings: DataSettings, split: str, limit: int | None) -> list[str]:
    """Non-empty texts of a source, in file order, at most `limit`."""
    if spec.startswith(HF_PREFIX):
        texts = _read_hf(spec[len(HF_PREFIX):], settings, split)
    else:
        path = Path(spec)
        if path.is_dir():
            path = path / f"{split}.jsonl"
        if not path.is_file():
            raise QueerbiasError(f"training data {path} not found (config key "
                                 f"'data.{'train' if split == 'train' else 'validation'}')")
        texts = _read_jsonl(path, settings.text_field)
    texts = [t for t in texts if t.strip()]
    if not texts:
        raise QueerbiasError(f"{spec}: no non-empty '{settings.text_field}' texts in split {split!r}")
    return texts[:limit] if limit else texts


def general_texts() -> list[str]:
    """The shipped neutral German documents (data/neutral_de, MIT): a general-language
    perplexity that in-domain fine-tuning cannot flatter (see its README)."""
    from importlib import resources

    return _read_jsonl(Path(str(resources.files("queerbias").joinpath(GENERAL_TEXT))), "text")


def _read_jsonl(path: Path, field: str) -> list[str]:
    texts = []
    for row, record in iter_jsonl(path):
        if not isinstance(record.get(field), str):
            raise DataError(path, "missing or not a string", row=row, field=field)
        texts.append(record[field])
    return texts


def _read_hf(name: str, settings: DataSettings, split: str) -> list[str]:
    import datasets

    hf_split = settings.hf_train_split if split == "train" else settings.hf_validation_split
    try:
        dataset = datasets.load_dataset(name, settings.hf_config, split=hf_split)
    except Exception as err:  # datasets raises many types for missing/offline data
        raise QueerbiasError(f"cannot load Hugging Face dataset {name!r} split {hf_split!r}: {err}") from err
    if settings.text_field not in dataset.column_names:
        raise QueerbiasError(f"dataset {name!r} has no column {settings.text_field!r} "
                             f"(config key 'data.text_field'); columns: {dataset.column_names}")
    return list(dataset[settings.text_field])


def tokenize(texts: list[str], tokenizer, kind: str, max_length: int) -> list[list[int]]:
    """Token ids per chunk: causal with BOS (if the tokenizer adds one) and EOS; masked
    with the model's special tokens around every chunk."""
    chunks = []
    if kind == "masked":
        prefix, suffix = _special_template(tokenizer)
        room = max_length - len(prefix) - len(suffix)
        for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]:
            chunks += [prefix + ids[i:i + room] + suffix for i in range(0, len(ids), room)]
        return chunks
    eos = tokenizer.eos_token_id
    for ids in tokenizer(texts)["input_ids"]:
        if eos is not None and (not ids or ids[-1] != eos):
            ids = ids + [eos]
        chunks += [ids[i:i + max_length] for i in range(0, len(ids), max_length)
                   if len(ids[i:i + max_length]) > 1]
    return chunks


def _special_template(tokenizer) -> tuple[list[int], list[int]]:
    """The special tokens the tokenizer puts before and after one sequence ([CLS] / [SEP])."""
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    full = tokenizer("a")["input_ids"]
    start = next(i for i in range(len(full)) if full[i:i + len(plain)] == plain)
    return full[:start], full[start + len(plain):]


def pack(chunks: list[list[int]], max_length: int) -> list[list[list[int]]]:
    """Consecutive chunks grouped into examples of at most `max_length` tokens (order kept)."""
    examples, current, size = [], [], 0
    for ids in chunks:
        if current and size + len(ids) > max_length:
            examples.append(current)
            current, size = [], 0
        current.append(ids)
        size += len(ids)
    if current:
        examples.append(current)
    return examples


class TokenDataset(torch.utils.data.Dataset):
    """Examples as the collators expect them: {'input_ids': ids} or {'segments': [ids, ...]}."""

    def __init__(self, examples: list, packed: bool):
        self.examples, self.packed = examples, packed

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, index: int) -> dict:
        key = "segments" if self.packed else "input_ids"
        return {key: self.examples[index]}


@dataclass
class CausalPadCollator:
    """Right-padded causal batch; padding is excluded from the loss by position, not by id
    (GPT-2 style models pad with their EOS token, which must still be learned).

    `shift`: the labels at position t are the token at t + 1, for a model whose loss compares
    `logits[t]` with `labels[t]` (XLM, `modeling.shifts_labels`); the others shift internally and
    get `labels = input_ids`."""

    pad_id: int
    shift: bool = False

    def __call__(self, features: list[dict]) -> dict:
        width = max(len(f["input_ids"]) for f in features)
        ids = torch.full((len(features), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(features), width), dtype=torch.long)
        for row, feature in enumerate(features):
            ids[row, :len(feature["input_ids"])] = torch.tensor(feature["input_ids"])
            mask[row, :len(feature["input_ids"])] = 1
        labels = ids.masked_fill(mask == 0, -100)
        if self.shift:
            labels = torch.cat([labels[:, 1:], torch.full_like(labels[:, :1], -100)], dim=1)
        return {"input_ids": ids, "attention_mask": mask, "labels": labels}


@dataclass
class PackedCollator:
    """Flattens every document of every packed example into one padding-free row."""

    def __post_init__(self):
        self.flatten = DataCollatorWithFlattening(return_position_ids=True)

    def __call__(self, features: list[dict]) -> dict:
        return self.flatten([{"input_ids": ids} for f in features for ids in f["segments"]])


def build_dataset(chunks: list[list[int]], kind: str, packing: bool, max_length: int) -> TokenDataset:
    if kind == "causal" and packing:
        return TokenDataset(pack(chunks, max_length), packed=True)
    return TokenDataset(chunks, packed=False)


def make_collator(tokenizer, kind: str, packing: bool, mlm_probability: float, shift_labels: bool = False):
    """The batches of `kind`; `shift_labels` for a causal model that does not shift them itself."""
    if kind == "masked":
        return DataCollatorForLanguageModeling(tokenizer, mlm=True, mlm_probability=mlm_probability)
    if packing:
        if shift_labels:
            raise QueerbiasError("padding-free packing needs a model that shifts its labels itself")
        return PackedCollator()
    return CausalPadCollator(tokenizer.pad_token_id, shift_labels)
