"""What an objective declares so that one runner trains it, one config loader reads it and one card describes it.

An objective is a way of training a model against bias (config key `objective`): lm,
cda, equalise, dpo, contrast. As PEFT keeps every method in `tuners/<name>/`, each lives in
`objectives/<name>/` of one shape: `config.py` holds its config section (a dataclass of
`queerbias.options` fields, the config key named after the objective, every key its
trainer reads), `objective.py` its declaration (a subclass of `Objective`, generic over
that section: what the card says, its default benchmarks, what it needs, its checks across
keys) and `trainer.py` `make_trainer(setup)`, which builds the `transformers.Trainer` (or
TRL trainer) that trains it. After TRL, the types run from the YAML key to the loss: the
section is read as its class (`TrainConfig.section`), the declaration's `make_trainer`
imports the trainer's by name and hands it a `TrainerSetup[Config]`, and the trainer and
its loss import the section's class (the declaration imports the trainer, never the
reverse). Adding one is its folder plus one line in `objectives.registry`
(docs/new-objective.md).

Light at the top: configs and cards read declarations without the numeric stack; a
declaration's `make_trainer` imports its folder's trainer.py when a run starts.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

if TYPE_CHECKING:
    from queerbias.models.loading import LoadedModel
    from queerbias.pairs.schema import PairSet
    from queerbias.train.config import TrainConfig

Settings = TypeVar("Settings")


@dataclass
class TrainerSetup(Generic[Settings]):
    """What every trainer is built from: the run's config, the objective's own section (`settings`, an
    instance of its `Config`: `TrainerSetup[EqualiseConfig]`, None for an objective without one) and
    base model, the corpus texts (None for objectives that train on no corpus), training pairs (None
    for objectives without), and the pieces the runner prepared (`arguments`: `TrainingArguments`
    keyword arguments; callbacks)."""

    config: TrainConfig
    settings: Settings
    lm: LoadedModel
    run_dir: Path
    texts: list[str] | None
    pairs: PairSet | None
    packing: bool
    max_length: int
    arguments: dict
    callbacks: list
    process_index: int
    num_processes: int


class Objective(ABC, Generic[Settings]):
    """One objective, generic over its config section (`Objective[EqualiseConfig]`; `Objective[None]` without one).
    Subclasses set the class attributes and `make_trainer`; the other methods have working defaults."""

    name: ClassVar[str]
    #: the model card's tag and what the card says it trains ("... to reduce bias by <description>")
    tag: ClassVar[str]
    description: ClassVar[str]
    #: references the card lists (one line each)
    references: ClassVar[tuple[str, ...]] = ()
    #: its config section (a dataclass), read from the config key named after the objective; None: none
    Config: ClassVar[type | None] = None
    #: config sections the card lists as configuring it (its own among them)
    card_sections: ClassVar[tuple[str, ...]] = ()
    #: trains on the pairs of `pairs.train` (required then, refused otherwise)
    uses_pairs: ClassVar[bool] = False
    #: can train on pairs mined from text (`pairs.mine`): pairs without preference triples
    mined_pairs: ClassVar[bool] = False
    #: trains on the corpus of `data.train` (its validation split is perplexity's either way)
    uses_corpus: ClassVar[bool] = True
    #: `cda.augment` adds counterfactual copies to its corpus
    augmentable: ClassVar[bool] = False
    #: judged on data it did not train on, as a mitigation is (a suite's training companion's `data`, default benchmarks)
    held_out: ClassVar[bool] = True
    #: the model family it needs (`families.CAUSAL`), and why; refused before the weights load
    needs_kind: ClassVar[str | None] = None
    needs_kind_reason: ClassVar[str] = ""

    def settings(self, config: TrainConfig) -> Settings:
        """This objective's section of `config` (an instance of `Config`), None without one."""
        return config.section(self.Config) if self.Config else None

    def validate(self, config: TrainConfig, require) -> None:
        """Checks across config keys (`require(ok, key, message)`; the own section is
        `config.section(Config)`); a field's own range is its metadata."""

    def card_references(self, config: dict) -> tuple[str, ...]:
        """The references the card lists for a run of this objective (`config`: the run's config.yaml)."""
        return self.references

    def prepare_corpus(self, config, texts: list[str]) -> tuple[list[str], dict]:
        """The training texts as this objective trains on them, and what was done to them (recorded
        in config.yaml's `record` and every summary; {}: nothing)."""
        return texts, {}

    @abstractmethod
    def make_trainer(self, setup: TrainerSetup[Settings]):
        """The trainer: `make_trainer` of the `trainer.py` beside the objective's `objective.py`, imported when a
        run starts (it imports torch and transformers)."""
