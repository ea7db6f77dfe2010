"""Typed training configuration: YAML file + `key=value` overrides -> validated dataclasses.

Every key is a `queerbias.options` field with its type, range and help, so a typo or an
out-of-range value (`lora.alpha: 0`, a negative `weight_decay`, `nan`) fails, naming the
dotted key (and the closest key, for a typo), before any model is loaded. The sections are
the core ones below plus one per registered objective, named after it (`equalise:`, `dpo:`,
`cda:`; its dataclass lives in its folder, `train.objectives`), held in `sections` and read
typed with `TrainConfig.section(EqualiseConfig)`. Checks across keys are `validate`'s and
each objective's. The resolved config is saved into the run directory, and a rerun (resume)
must resolve to the same one; an option added later at its default changes no run.

Reading and checking a config imports neither torch nor transformers (`queerbias study`
checks every cell's config, a CLI checks one before any model loads). The checks that need
transformers (the scheduler's name, the report integrations) are `check_installed`'s, which
a run calls first.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Literal, TypeVar

import yaml

from queerbias import families
from queerbias.errors import QueerbiasError
from queerbias.fileio import atomic_write
from queerbias.options import (
    apply_override,
    auto_or_count,
    build,
    config_key,
    option,
    section,
    seed_option,
    suggestion,
    to_dict,
)
from queerbias.pairs.mining import LEXICONS
from queerbias.report.options import CompareOptions
from queerbias.text.taxonomy import GROUPS
from queerbias.train import benchmarks
from queerbias.train.benchmarks import BenchmarkSettings
from queerbias.train.objectives import registry as objectives
from queerbias.yamlio import load_yaml_mapping

log = logging.getLogger(__name__)
Section = TypeVar("Section")
#: keys that moved or were renamed: old key -> new one, as (section, key) or (key,) at the top (a config or a saved
#: run written before still reads): equalise's pair batches went into its own section, and the three batch sizes
#: got names that say their unit
MOVED = {
    ("cda", "lexicon"): ("data", "lexicon"),
    ("batch_size",): ("examples_per_device",),
    ("pairs", "batch_size"): ("equalise", "pairs_per_batch"),
    ("pairs", "balance"): ("equalise", "balance"),
    ("pairs", "groups_per_batch"): ("equalise", "groups_per_batch"),
    ("eval", "batch_size"): ("eval", "sequences_per_batch"),
}


def _max_steps(value: int) -> str | None:
    return None if value == -1 or value > 0 else f"must be -1 (use epochs) or positive, got {value}"


@dataclass
class LoraSettings:
    r: int = option(16, "rank of the adapter", ge=1)
    alpha: int = option(32, "scaling numerator (alpha / r); 0 would leave the model unchanged", gt=0)
    dropout: float = option(0.05, "dropout on the adapter's input", ge=0, lt=1)
    target_modules: list[str] | None = option(None, "modules to adapt; null: per architecture "
                                                    "(`modeling.LORA_TARGETS`)")
    modules_to_save: list[str] | None = option(None, "modules trained in full; null: the masked-LM head transform "
                                                     "for masked LMs, nothing for causal LMs (each must exist)")


@dataclass
class DataSettings:
    train: str = option("", "a `queerbias corpus build` folder, a JSONL file, or `hf:NAME` (a Hugging Face dataset)")
    validation: str | None = option(None, "JSONL file or `hf:NAME`; null: validation.jsonl beside train / the "
                                          "dataset's split")
    text_field: str = option("text", "the field of a JSONL record that holds the text")
    max_length: int = option(512, "tokens per training sequence; longer documents are cut", ge=8)
    packing: bool | None = option(None, "causal LMs only: padding-free packing of whole documents; null: on for "
                                        "causal")
    max_train_docs: int | None = option(None, "at most this many training documents", ge=1)
    max_validation_docs: int | None = option(None, "at most this many validation documents", ge=1)
    hf_config: str | None = option(None, "the Hugging Face dataset's config")
    hf_train_split: str = option("train", "the Hugging Face dataset's training split")
    hf_validation_split: str = option("validation", "the Hugging Face dataset's validation split")
    identities: list[str] | None = option(None, "targeted mitigation: keep only documents that mention one of these "
                                                "taxonomy groups (or a finer group under it)")
    lexicon: str | None = option(None, "the counterfactual lexicon (YAML): the identity phrases `identities` finds "
                                       "and cda swaps; null: the packaged German lexicon (data/cda/lexicon_de.yaml)")
    allow_overlap: bool = option(False, "let the corpus contain sentences of the evaluation items; recorded in "
                                        "every summary")


@dataclass
class TrainingPairs:
    """The counterfactual pairs the pair objectives train on, and the held-out guard (config key `pairs`;
    loaded by `train.pair_batches`). How an objective batches them is its own section's (`equalise.pairs_per_batch`,
    `contrast.cells`)."""

    train: str | list[str] | None = option(None, "a split side (`queerbias-de:train`), a registered pair set or a "
                                                 "pair file, or a list of them (e.g. [queerbias-de-frames:train, "
                                                 "winoqueer-v0:train])")
    train_optional: list[str] | None = option(None, "pair sets added when they are on this machine (cached or in "
                                                    "the shared data folder), else skipped with a warning")
    allow_overlap: bool = option(False, "let evaluation items share sentences with the training pairs; recorded "
                                        "in every summary")
    mine: list[str] | None = option(None, "also train on counterfactual pairs mined from real text "
                                          "(`pairs.mining`): corpus (the training corpus), or JSONL files / corpus "
                                          "folders; counts go into config.yaml's record")
    mine_lexicons: dict | None = option(None, "language (de, en) -> a CDA lexicon file for mining (default: the "
                                              "packaged ones)")


def training_sources(train: str | list[str] | None) -> list[tuple[str, str]]:
    """(config key, pair spec) of each configured training pair set."""
    if not train:
        return []
    if isinstance(train, str):
        return [("pairs.train", train)]
    return [(f"pairs.train[{index}]", spec) for index, spec in enumerate(train)]


@dataclass
class EvalSettings:
    benchmarks: list[BenchmarkSettings] | None = option(None, "what every checkpoint is scored on; null: the "
                                                              "objective's defaults (`train.benchmarks.defaults`)")
    perplexity: bool = option(True, "in-domain perplexity on the corpus's validation split")
    general_perplexity: bool = option(True, "perplexity on the shipped neutral German text (general language, "
                                            "not the corpus's domain)")
    sequences_per_batch: int | str = option("auto", "sentences the scorer runs per batch when it evaluates a "
                                                    "checkpoint, or auto (a token budget); changes nothing but speed",
                                            check=auto_or_count)
    base_from: str | None = option(None, "a folder of base-model evaluations shared by the runs of one model "
                                         "(`RUN/base/`'s layout): matching ones are reused, the others scored here "
                                         "and published there (train/shared_base.py)")


@dataclass
class TrainConfig:
    """The core keys and, in `sections`, one section per registered objective that has settings (the
    YAML key named after the objective), each its objective's own `Config` class."""

    model: str = option("", "a Hub id, local folder or embedded:gemma-3-270m")
    kind: str | None = option(None, "the model family, masked or causal; null: from the model (XLM's configs do not "
                                    "say: set it)", choices=families.names)
    lang: str | None = option(None, "models with language embeddings (XLM): the training text's language, passed "
                                    "as langs (one of the model's lang2id); other models ignore it")
    method: Literal["lora", "full"] = option("lora", "a LoRA adapter or full fine-tuning")
    objective: str = option("lm", "what the run trains (`train.objectives`)", choices=objectives.names)
    output_dir: str = option("", "the run folder; empty: runs/train/<config name>")
    seed: int = seed_option("seed of the adapter, the data order and the pair batches")
    epochs: float = option(3.0, "passes over the corpus", gt=0)
    max_steps: int = option(-1, "positive: stop after this many optimizer steps (overrides epochs)",
                            check=_max_steps)
    learning_rate: float = option(2e-5, "peak learning rate", gt=0)
    examples_per_device: int = option(8, "corpus examples (token sequences of up to data.max_length) per process "
                                         "and micro-batch: transformers' per_device_train_batch_size", ge=1)
    grad_accum: int = option(1, "micro-batches per optimizer step", ge=1)
    eval_every: int = option(500, "evaluate and save a checkpoint every N optimizer steps", ge=1)
    lr_scheduler: str = option("linear", "transformers' learning-rate schedule (`SchedulerType`; checked when a run "
                                         "starts, `check_installed`)")
    warmup_ratio: float = option(0.0, "fraction of the optimizer steps spent warming up the learning rate", ge=0,
                                 lt=1)
    weight_decay: float = option(0.0, "AdamW weight decay", ge=0)
    max_grad_norm: float = option(1.0, "gradient clipping norm", gt=0)
    precision: Literal["auto", "fp32", "bf16", "fp16"] = option(
        "auto", "training precision; checkpoint scoring always runs in float32. auto: bf16 on a CUDA GPU that "
                "supports it or a CPU with bf16 instructions, fp32 elsewhere (`train.precision`)")
    threads: int | None = option(None, "torch threads per process; null: torch's default", ge=1)
    activation_checkpointing: bool = option(
        False, "recompute in the backward pass what the forward would hold for it: each layer's activations, and "
               "(every objective but dpo) the LM head's logits with autocast's low-precision copy of its weights; the "
               "same gradients, less memory, more time (the demo: BENCHMARKS.md, \"The whole demo\")")
    mlm_probability: float = option(0.15, "masked LMs: the share of tokens masked", gt=0, lt=1)
    merge: bool = option(False, "also export the adapter merged into the base model (RUN/merged/)")
    logging_steps: int = option(10, "log the loss every N steps", ge=1)
    report_to: str | list[str] = option("none", "where the trainer also sends its logs: none, or Trainer "
                                                "integrations (tensorboard: pip install 'queerbias[tracking]')")
    trust_remote_code: bool = option(False, "run code shipped with a Hub model")
    allow_pickle_weights: bool = option(False, "read a checkpoint that has only pickle (.bin) weights and no safetensors "
                                               "conversion on the Hub, with torch.load(weights_only=True)")
    lora: LoraSettings = section(LoraSettings)
    data: DataSettings = section(DataSettings)
    pairs: TrainingPairs = section(TrainingPairs)
    eval: EvalSettings = section(EvalSettings)
    compare: CompareOptions = section(CompareOptions)
    #: objective name -> its section (an instance of its `Config`); read one typed with `section`
    sections: dict[str, object] = field(default_factory=dict, repr=False)

    def section(self, cls: type[Section]) -> Section:
        """The objective section of type `cls` (`config.section(EqualiseConfig).weight`)."""
        for found in self.sections.values():
            if isinstance(found, cls):
                return found
        raise KeyError(f"no config section of type {cls.__name__}")

    def to_dict(self) -> dict:
        """The config as its YAML reads: the core keys, then each objective's section under its name."""
        values = dataclasses.asdict(self)
        return {**{key: value for key, value in values.items() if key != "sections"}, **values["sections"]}

    def benchmark_dirs(self) -> list[str]:
        """Output folder name of each benchmark, in config order (`train.benchmarks`)."""
        return benchmarks.folder_names(self.eval.benchmarks)


def build_config(raw: dict) -> TrainConfig:
    """The config from a mapping as YAML holds it: core keys and one section per objective (moved keys
    read at their new place, with a warning); every key typed, an unknown one named with the closest."""
    raw = migrate(raw)
    own = {o.name: o.Config for o in objectives.list_objectives() if o.Config}
    core = [f.name for f in fields(TrainConfig) if f.name != "sections"]
    unknown = sorted(set(raw) - set(core) - set(own), key=str)
    if unknown:
        raise QueerbiasError(f"{config_key(str(unknown[0]))} is unknown; {suggestion(unknown[0], [*core, *own])}")
    config = build(TrainConfig, {key: value for key, value in raw.items() if key in core})
    config.sections = {name: build(cls, {} if raw.get(name) is None else raw[name], config_key, f"{name}.")
                       for name, cls in own.items()}
    return config


def migrate(raw: dict, warn: bool = True) -> dict:
    """`raw` with every moved key (`MOVED`) at its new place (a warning for a config the user wrote, none
    for one a run saved); a key given at both is refused."""
    raw = dict(raw)
    for old, new in MOVED.items():
        source = raw if len(old) == 1 else raw.get(old[0])
        if not isinstance(source, dict) or old[-1] not in source:
            continue
        value = source[old[-1]]
        if len(old) == 1:
            del raw[old[0]]
        else:
            raw[old[0]] = {k: v for k, v in source.items() if k != old[-1]}
        target = raw if len(new) == 1 else dict(raw.get(new[0]) or {})
        old_key, new_key = ".".join(old), ".".join(new)
        if new[-1] in target:
            raise QueerbiasError(f"config key '{old_key}' moved to '{new_key}'; give only the latter")
        if warn:
            log.warning("config key '%s' is now '%s'", old_key, new_key)
        target[new[-1]] = value
        if len(new) == 2:
            raw[new[0]] = target
    return raw


def load_config(path: str | Path | None, overrides: list[str] = ()) -> TrainConfig:
    """Read YAML (or start empty), apply `dotted.key=value` overrides, type-check, validate."""
    raw: dict = {}
    if path is not None:
        path = Path(path)
        raw = load_yaml_mapping(path, what="training config")
    for item in overrides:
        apply_override(raw, item)
    config = build_config(raw)
    if not config.output_dir:
        config.output_dir = str(Path("runs") / "train" / (path.stem if path else "run"))
    return _completed(config)


def config_from_dict(raw: dict) -> TrainConfig:
    return _completed(build_config(raw))


def _completed(config: TrainConfig) -> TrainConfig:
    """The objective's default benchmarks where none are configured, then every check."""
    if config.eval.benchmarks is None:
        config.eval.benchmarks = benchmarks.defaults(objectives.get_objective(config.objective).held_out)
    validate(config)
    return config


def default_values() -> dict:
    """Every training option at its default, a benchmark entry's as the one item of eval.benchmarks
    (what `options.without_new_defaults` needs to recognise an option added later)."""
    defaults = build_config({}).to_dict()
    defaults["eval"]["benchmarks"] = [to_dict(BenchmarkSettings())]
    return defaults


def save_config(config: TrainConfig, path: Path, record: dict | None = None) -> None:
    """The resolved config, plus under `record` what the run derived from it (not compared on
    resume: objective, held-out check, corpus counts)."""
    dump = {**config.to_dict(), **({"record": record} if record else {})}
    atomic_write(path, yaml.safe_dump(dump, sort_keys=False, allow_unicode=True))


def validate(config: TrainConfig) -> None:
    """Checks across keys (each field's type and range were checked as it was read); each names a key."""
    def require(ok: bool, key: str, message: str) -> None:
        if not ok:
            raise QueerbiasError(f"config key '{key}' {message}")

    require(bool(config.model), "model", "is required (a Hub id, local folder or embedded:gemma-3-270m)")
    require(bool(config.data.train), "data.train", "is required (a corpus folder, JSONL file or hf:NAME)")
    require(config.merge is False or config.method == "lora", "merge",
            "only applies to method: lora (a fully fine-tuned model needs no merging)")
    queer = [name for name, group in GROUPS.items() if group.side == "queer"]
    for i, name in enumerate(config.data.identities or []):
        require(name in queer, f"data.identities[{i}]", f"names unknown group {name!r}; known: {', '.join(queer)}")
    require(config.data.identities is None or bool(config.data.identities), "data.identities",
            "is empty; leave it out to keep every document")
    benchmarks.check(config.eval.benchmarks, config.compare.best, require)
    require(config.eval.base_from != "", "eval.base_from", "must name a folder (or be left out)")
    objective = objectives.get_objective(config.objective)
    _check_training_pairs(config, objective, require)
    require(objective.needs_kind is None or config.kind in (None, objective.needs_kind), "objective",
            f"{objective.name} needs a {objective.needs_kind} LM ({objective.needs_kind_reason}); this model is "
            f"{config.kind}")
    for each in objectives.list_objectives():  # each checks its own section, and what it needs when chosen
        each.validate(config, require)
    _check_unread_sections(config, objective, require)


def _check_unread_sections(config: TrainConfig, objective, require) -> None:
    """A key set in the section of an objective the run does not train (`equalise.anchor_term` under
    `objective: lm`) would be silently ignored: refused, naming the key and the two ways out."""
    read = {objective.name, *objective.card_sections}
    for name, given in config.sections.items():
        if name in read:
            continue
        values, default = dataclasses.asdict(given), dataclasses.asdict(type(given)())
        changed = [key for key in values if values[key] != default[key]]
        require(not changed, f"{name}.{changed[0] if changed else ''}",
                f"is set, but objective {objective.name} does not read the {name} section, so it would have "
                f"no effect; set objective: {name} to train with it, or remove the key")


def _check_training_pairs(config: TrainConfig, objective, require) -> None:
    """The `pairs` keys against the objective: pairs where it trains on them (given or mined),
    none where it does not, mining only where mined pairs can be trained on."""
    registered = objectives.list_objectives()
    with_pairs = [o.name for o in registered if o.uses_pairs]
    miners = [o.name for o in registered if o.mined_pairs]
    require(not objective.uses_pairs or bool(config.pairs.train or config.pairs.mine), "pairs.train",
            f"is required for objective {objective.name} (training pairs, e.g. queerbias-de:train)")
    require(objective.uses_pairs or not config.pairs.train, "pairs.train",
            f"has no use for objective {objective.name} (only {' and '.join(with_pairs)} train on pairs)")
    twice = sorted({spec for _, spec in training_sources(config.pairs.train)} & set(config.pairs.train_optional or []))
    require(not twice, "pairs.train_optional", f"repeats {', '.join(twice)} of pairs.train (its pairs would count twice)")
    require(objective.mined_pairs or not config.pairs.mine, "pairs.mine",
            f"applies to objective {' and '.join(miners)} (mined pairs have no preference triples for dpo)")
    require(config.pairs.mine is None or bool(config.pairs.mine), "pairs.mine",
            "is empty; leave it out, or name sources (corpus, a JSONL file or corpus folder)")
    for language in config.pairs.mine_lexicons or {}:
        require(language in LEXICONS, f"pairs.mine_lexicons.{language}",
                f"names a language without mining support; known: {', '.join(LEXICONS)}")


def check_installed(config: TrainConfig) -> None:
    """What only transformers can check, when a run starts (before any model loads): the learning-rate
    scheduler is one of transformers' (`SchedulerType`), and each `report_to` destination a Trainer
    integration whose package is installed (transformers' integrations, seconds to import, only
    for a destination to check)."""
    from transformers.trainer_utils import SchedulerType  # reading a config imports no transformers

    schedulers = [s.value for s in SchedulerType]
    if config.lr_scheduler not in schedulers:
        raise QueerbiasError(f"config key 'lr_scheduler' must be one of {', '.join(schedulers)}, got "
                             f"{config.lr_scheduler!r}")
    report_to = config.report_to
    names = [name for name in ([report_to] if isinstance(report_to, str) else report_to) if name != "none"]
    if not names:
        return
    from transformers import integrations  # seconds to import: only for a destination to check

    for name in names:
        if name not in integrations.integration_utils.INTEGRATION_TO_CALLBACK:
            raise QueerbiasError(f"config key 'report_to' must be 'none' or one of "
                                 f"{', '.join(sorted(integrations.integration_utils.INTEGRATION_TO_CALLBACK))}, got {name!r}")
        if name not in integrations.get_available_reporting_integrations():
            hint = " (pip install 'queerbias[tracking]')" if name == "tensorboard" else ""
            raise QueerbiasError(f"config key 'report_to': {name} is not installed{hint}")
