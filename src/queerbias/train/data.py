"""Training text: where it is read from, and the dataset the trainer iterates.

Sources are a `queerbias corpus build` folder (train.jsonl / validation.jsonl), any JSONL
file with a text field, or a Hugging Face dataset (`hf:NAME`). The model's family makes
them examples and batches (`Family.training_chunks`, `training_examples`, `collator`):
documents longer than `max_length` are cut into consecutive chunks, never dropped, and a
causal LM can pack short documents padding-free.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from queerbias.errors import DataError, QueerbiasError
from queerbias.fileio import iter_jsonl

if TYPE_CHECKING:  # train.config reads training pairs through this module (train.pair_batches)
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
    
    return _read_jsonl(Path(str(resources.files("queerbias").joinpath(GENERAL_TEXT))), "text")


def _read_jsonl(path: Path, field: str) -> list[str]:
    texts = []
    for row, record in iter_jsonl(path):
        if not isinstance(record.get(field), str):
            raise DataError(path, "missing or not a string", row=row, field=field)
        texts.append(record[field])
    return texts


def _read_hf(name: str, settings: DataSettings, split: str) -> list[str]:
    import datasets  # seconds to import: only for a Hugging Face dataset

    hf_split = settings.hf_train_split if split == "train" else settings.hf_validation_split
    try:
        dataset = datasets.load_dataset(name, settings.hf_config, split=hf_split)
    except Exception as err:  # datasets raises many types for missing/offline data
        raise QueerbiasError(f"cannot load Hugging Face dataset {name!r} split {hf_split!r}: {err}") from err
    if settings.text_field not in dataset.column_names:
        raise QueerbiasError(f"dataset {name!r} has no column {settings.text_field!r} "
                             f"(config key 'data.text_field'); columns: {dataset.column_names}")
    return list(dataset[settings.text_field])


class TokenDataset(torch.utils.data.Dataset):
    """A family's training examples (`Family.training_examples`) as its collator expects them: {'input_ids': ids},
    or {'segments': [ids, ...]} where packed."""

    def __init__(self, examples: list, packed: bool):
        self.examples, self.packed = examples, packed

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, index: int) -> dict:
        key = "segments" if self.packed else "input_ids"
        return {key: self.examples[index]}
