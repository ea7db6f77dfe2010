"""Typed training configuration: YAML file + `key=value` overrides -> validated dataclasses.

Every problem is reported as a `QueerbiasError` naming the dotted key (`data.max_length`),
so a typo in a config fails before any model is loaded. The resolved config is saved into
the run directory, and a rerun (resume) must resolve to the same one.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml

from queerbias.errors import QueerbiasError
from queerbias.yamlio import load_yaml, load_yaml_mapping


@dataclass
class LoraSettings:
    r: int = 16
    alpha: int = 32
    dropout: float = 0.05
    #: None = chosen per architecture (`modeling.LORA_TARGETS`)
    target_modules: list[str] | None = None
    #: None = the masked-LM head transform for masked LMs, nothing for causal LMs
    modules_to_save: list[str] | None = None


@dataclass
class DataSettings:
    #: a `queerbias corpus build` folder, a JSONL file, or `hf:NAME` (a Hugging Face dataset)
    train: str = ""
    #: JSONL file or `hf:NAME`; default: validation.jsonl beside train / the dataset's split
    validation: str | None = None
    text_field: str = "text"
    max_length: int = 512
    #: causal LMs only: padding-free packing of whole documents; None = on for causal
    packing: bool | None = None
    max_train_docs: int | None = None
    max_validation_docs: int | None = None
    hf_config: str | None = None
    hf_train_split: str = "train"
    hf_validation_split: str = "validation"
    #: targeted mitigation: keep only documents that mention one of these taxonomy groups
    #: (or a finer group under it), found with the CDA lexicon's inflected phrases
    identities: list[str] | None = None


@dataclass
class PairSettings:
    """The counterfactual pairs `equalise` and `dpo` train on, and the held-out guard."""

    #: a split side (`queerbias-de:train`), a registered pair set or a pair file, or a list of
    #: them (e.g. German frames and English WinoQueer v0: [queerbias-de-frames:train, winoqueer-v0:train])
    train: str | list[str] | None = None
    #: pair sets added to the training pairs when they are on this machine (cached or in the
    #: shared data folder), else skipped with a warning: e.g. [winoqueer-v0:train]
    train_optional: list[str] | None = None
    #: pairs per micro-batch (equalise)
    batch_size: int = 32
    #: draw every batch evenly over the identity groups (round-robin) rather than at random
    balance: bool = True
    #: groups in one balanced batch (None = all): fewer groups, more pairs per group mean
    groups_per_batch: int | None = None
    #: let evaluation pairs share sentences with training pairs; recorded in every summary
    allow_overlap: bool = False
    #: also train on counterfactual pairs mined from real text (pairs/mining.py): "corpus"
    #: (the training corpus), or JSONL files / corpus folders; counts go into config.yaml's record
    mine: list[str] | None = None
    #: language (de, en) -> a CDA lexicon file for mining (default: the packaged ones)
    mine_lexicons: dict | None = None


@dataclass
class EqualiseSettings:
    """L = L_lm + weight * (pair_term * mean_i d_i^2 + group_term * mean_g (mean_{i in g} d_i)^2
    + sign_term * mean_g (mean_{i in g} tanh(d_i / temperature))^2), d_i = s(sent_more) -
    s(sent_less), the benchmark's own shared-token score."""

    #: lambda: the weight of the pair loss against the language-modelling loss
    weight: float = 1.0
    #: weight of the per-pair square (the issue's formula)
    pair_term: float = 1.0
    #: weight of the squared per-group mean: targets the identity phrase's shared offset
    group_term: float = 0.0
    #: weight of the squared per-group mean of tanh(d / temperature): a robust location
    #: (towards the median) of d, which the binary score reads (an option beyond the issue)
    sign_term: float = 0.0
    #: scale of d (nats) in the sign term: smaller reads the sign of d more sharply
    temperature: float = 1.0
    #: weight of the counterfactual pairing term: the divergence of the two sentences'
    #: next-token distributions at every shared position after the identity phrase
    #: (train/objectives/pairing.py)
    clp_term: float = 0.0
    #: js (Jensen-Shannon), symmetric_kl, or kl (KL of sent_less's from sent_more's context)
    clp_divergence: Literal["js", "symmetric_kl", "kl"] = "js"
    #: compare only the first N such positions of each pair (None: all)
    clp_positions: int | None = None
    #: compare the distributions on the k tokens most likely under either plus one outcome
    #: for the rest (a lower bound of the full divergence, many times cheaper on a large
    #: vocabulary); None: the whole vocabulary
    clp_top_k: int | None = 256


@dataclass
class CdaSettings:
    #: a lexicon YAML file; None = the packaged German lexicon (data/cda/lexicon_de.yaml)
    lexicon: str | None = None
    #: two-sided: keep each matched document and add its swapped copy; one-sided: replace it
    two_sided: bool = True
    #: augment the corpus under objective equalise too (objective cda always does)
    augment: bool = False


@dataclass
class DpoSettings:
    #: deviation from the reference model (TRL's beta)
    beta: float = 0.1
    #: TRL loss type
    loss_type: str = "sigmoid"
    #: longest prompt + continuation in tokens
    max_length: int = 64


@dataclass
class BenchmarkSettings:
    #: a registered suite (`queerbias suites`): pairs, gruff, lou, gifi
    suite: str = "pairs"
    #: what the suite evaluates: pairs: a registered pair set or file (default queerbias-de);
    #: gruff/lou: their data folder (default: the cached copy); gifi: a prompts YAML
    data: str | None = None
    #: seeded subset size (None = all items; per setting for gruff, per task for lou,
    #: templates per task for gifi)
    sample: int | None = 200
    seed: int = 0
    #: output folder inside each checkpoint and in compare/; default `bias` for the first,
    #: `bias-<suite>` after
    name: str | None = None
    #: further settings of the suite (`queerbias run SUITE --help`; gruff: settings, replicates, ...)
    options: dict = field(default_factory=dict)
    #: skip (with a warning) when `data` is not available offline: a published set neither
    #: cached nor in the shared data folder (`pairs.registry.available_offline`)
    optional: bool = False


@dataclass
class EvalSettings:
    #: None = the objective's default (`default_benchmarks`)
    benchmarks: list[BenchmarkSettings] | None = None
    perplexity: bool = True
    #: perplexity on the shipped neutral German text (general language, not the corpus's domain)
    general_perplexity: bool = True
    batch_size: int | str = "auto"
    #: a folder of base-model evaluations shared by the runs of one model (`RUN/base/`'s layout):
    #: matching ones are reused, the others scored here and published there (train/shared_base.py)
    base_from: str | None = None


@dataclass
class CompareSettings:
    best: Literal["closest50", "lowest", "distance"] = "closest50"
    ppl_margin: float = 5.0
    resamples: int = 10_000


@dataclass
class TrainConfig:
    model: str = ""
    kind: Literal["masked", "causal"] | None = None
    method: Literal["lora", "full"] = "lora"
    #: lm: continued pretraining; cda: the corpus with counterfactual copies; equalise: lm
    #: plus the pair loss; dpo: preference tuning on stereotype frames (causal LMs)
    objective: Literal["lm", "cda", "equalise", "dpo"] = "lm"
    output_dir: str = ""
    seed: int = 0
    epochs: float = 3.0
    #: positive: stop after this many optimizer steps (overrides epochs)
    max_steps: int = -1
    learning_rate: float = 2e-5
    batch_size: int = 8
    grad_accum: int = 1
    #: evaluate and save a checkpoint every N optimizer steps
    eval_every: int = 500
    lr_scheduler: str = "linear"
    #: fraction of the optimizer steps spent warming up the learning rate
    warmup_ratio: float = 0.0
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    #: training precision; checkpoint scoring always runs in float32. auto: bf16 on a CUDA GPU
    #: that supports it, fp32 on a CPU (train/precision.py: bf16 on a CPU can stall)
    precision: Literal["auto", "fp32", "bf16", "fp16"] = "auto"
    #: torch threads per process (None = torch's default)
    threads: int | None = None
    mlm_probability: float = 0.15
    merge: bool = False
    logging_steps: int = 10
    #: where the trainer also sends its logs and the checkpoint figures: "none", or Trainer
    #: integrations: tensorboard (pip install 'queerbias[tracking]'), wandb, trackio, ...
    report_to: str | list[str] = "none"
    trust_remote_code: bool = False
    lora: LoraSettings = field(default_factory=LoraSettings)
    data: DataSettings = field(default_factory=DataSettings)
    pairs: PairSettings = field(default_factory=PairSettings)
    equalise: EqualiseSettings = field(default_factory=EqualiseSettings)
    cda: CdaSettings = field(default_factory=CdaSettings)
    dpo: DpoSettings = field(default_factory=DpoSettings)
    eval: EvalSettings = field(default_factory=EvalSettings)
    compare: CompareSettings = field(default_factory=CompareSettings)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def benchmark_dirs(self) -> list[str]:
        """Output folder name of each benchmark, in config order."""
        return [b.name or ("bias" if i == 0 else f"bias-{b.suite}")
                for i, b in enumerate(self.eval.benchmarks)]


def load_config(path: str | Path | None, overrides: list[str] = ()) -> TrainConfig:
    """Read YAML (or start empty), apply `dotted.key=value` overrides, type-check, validate."""
    raw: dict = {}
    if path is not None:
        path = Path(path)
        raw = load_yaml_mapping(path, what="training config")
    for item in overrides:
        _apply_override(raw, item)
    config = _with_default_benchmarks(_build(TrainConfig, raw, ""))
    if not config.output_dir:
        config.output_dir = str(Path("runs") / "train" / (path.stem if path else "run"))
    validate(config)
    return config


def config_from_dict(raw: dict) -> TrainConfig:
    config = _with_default_benchmarks(_build(TrainConfig, raw, ""))
    validate(config)
    return config


def default_benchmarks(objective: str) -> list[BenchmarkSettings]:
    """What a run evaluates when `eval.benchmarks` is not given. Continued pretraining:
    200 pairs of queerbias-de. A mitigation objective: 200 held-out pairs
    (queerbias-de:test) and, out of distribution, 400 pairs each of English WinoQueer v0
    and WinoQueer-DE where they are on this machine (cached or in the shared data folder)."""
    if objective == "lm":
        return [BenchmarkSettings()]
    return [BenchmarkSettings(data="queerbias-de:test", name="bias"),
            BenchmarkSettings(data="winoqueer-v0", sample=400, name="bias-ood-en", optional=True,
                              options={"identical": "drop"}),  # v0 has two identical pairs
            BenchmarkSettings(data="winoqueer-de", sample=400, name="bias-ood-winoqueer-de",
                              optional=True)]


def _with_default_benchmarks(config: TrainConfig) -> TrainConfig:
    if config.eval.benchmarks is None:
        config.eval.benchmarks = default_benchmarks(config.objective)
    return config


def save_config(config: TrainConfig, path: Path, record: dict | None = None) -> None:
    """The resolved config, plus under `record` what the run derived from it (not compared on
    resume: objective, held-out check, corpus counts)."""
    from queerbias.fileio import atomic_write

    dump = {**config.to_dict(), **({"record": record} if record else {})}
    atomic_write(path, yaml.safe_dump(dump, sort_keys=False, allow_unicode=True))


def _apply_override(raw: dict, item: str) -> None:
    key, sep, text = item.partition("=")
    if not sep or not key:
        raise QueerbiasError(f"override {item!r} is not of the form key=value")
    value = load_yaml(f"override {item!r}", text) if text else None
    node = raw
    parts = key.split(".")
    for depth, part in enumerate(parts[:-1]):
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise QueerbiasError(f"override {item!r}: config key "
                                 f"'{'.'.join(parts[:depth + 1])}' is not a section")
        node = child
    node[parts[-1]] = value


def _build(cls, raw, prefix: str):
    if not isinstance(raw, dict):
        raise QueerbiasError(f"config key '{prefix.rstrip('.') or '(top)'}' must be a mapping")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(raw) - set(names))
    if unknown:
        raise QueerbiasError(f"config key '{prefix}{unknown[0]}' is unknown; known keys"
                             f"{' in ' + prefix.rstrip('.') if prefix else ''}: {', '.join(names)}")
    values = {name: _coerce(raw[name], hints[name], prefix + name) for name in names if name in raw}
    return cls(**values)


def _coerce(value, tp, key: str):
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for option in (a for a in args if a is not type(None)):
            try:
                return _coerce(value, option, key)
            except QueerbiasError as err:
                errors.append(str(err))
        raise QueerbiasError(errors[0] if len(errors) == 1 else
                             f"config key '{key}': {value!r} is not a valid {_describe(tp)}")
    if origin is Literal:
        if value not in args:
            raise QueerbiasError(f"config key '{key}' must be one of {', '.join(map(repr, args))}, "
                                 f"got {value!r}")
        return value
    if origin is list:
        if not isinstance(value, list):
            raise QueerbiasError(f"config key '{key}' must be a list, got {value!r}")
        return [_coerce(v, args[0], f"{key}[{i}]") for i, v in enumerate(value)]
    if dataclasses.is_dataclass(tp):
        return _build(tp, value if value is not None else {}, key + ".")
    if tp is dict:
        if not isinstance(value, dict):
            raise QueerbiasError(f"config key '{key}' must be a mapping, got {value!r}")
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise QueerbiasError(f"config key '{key}' must be true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise QueerbiasError(f"config key '{key}' must be an integer, got {value!r}")
        return value
    if tp is float:
        if isinstance(value, str):  # YAML 1.1 reads `2e-5` (no dot) as a string
            try:
                value = float(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise QueerbiasError(f"config key '{key}' must be a (finite) number, got {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise QueerbiasError(f"config key '{key}' must be a string, got {value!r}")
        return value
    raise TypeError(f"unsupported config type {tp} for {key}")


def _describe(tp) -> str:
    names = [getattr(a, "__name__", str(a)) for a in typing.get_args(tp) if a is not type(None)]
    return " or ".join(names)


def validate(config: TrainConfig) -> None:
    """Checks beyond types; each names the offending key."""
    from queerbias.suites.registry import REGISTRY
    from queerbias.train.evaluation import benchmark_settings

    def require(ok: bool, key: str, message: str) -> None:
        if not ok:
            raise QueerbiasError(f"config key '{key}' {message}")

    require(bool(config.model), "model", "is required (a Hub id, local folder or "
            "embedded:gemma-3-270m)")
    require(bool(config.data.train), "data.train", "is required (a corpus folder, JSONL file "
            "or hf:NAME)")
    require(config.epochs > 0, "epochs", f"must be positive, got {config.epochs}")
    require(config.max_steps == -1 or config.max_steps > 0, "max_steps",
            f"must be -1 (use epochs) or positive, got {config.max_steps}")
    require(config.learning_rate > 0, "learning_rate", f"must be positive, got {config.learning_rate}")
    for key in ("batch_size", "grad_accum", "eval_every", "logging_steps"):
        require(getattr(config, key) >= 1, key, f"must be at least 1, got {getattr(config, key)}")
    require(0 <= config.warmup_ratio < 1, "warmup_ratio", "must be in [0, 1)")
    require(0 < config.mlm_probability < 1, "mlm_probability",
            f"must be between 0 and 1, got {config.mlm_probability}")
    require(config.threads is None or config.threads >= 1, "threads", "must be at least 1")
    require(config.data.max_length >= 8, "data.max_length",
            f"must be at least 8 tokens, got {config.data.max_length}")
    for key in ("max_train_docs", "max_validation_docs"):
        value = getattr(config.data, key)
        require(value is None or value >= 1, f"data.{key}", "must be at least 1")
    require(config.lora.r >= 1, "lora.r", f"must be at least 1, got {config.lora.r}")
    require(0 <= config.lora.dropout < 1, "lora.dropout", "must be in [0, 1)")
    require(config.merge is False or config.method == "lora", "merge",
            "only applies to method: lora (a fully fine-tuned model needs no merging)")
    batch = config.eval.batch_size
    require(batch == "auto" or (isinstance(batch, int) and batch >= 1), "eval.batch_size",
            f"must be 'auto' or a positive integer, got {batch!r}")
    for i, bench in enumerate(config.eval.benchmarks):
        require(bench.suite in REGISTRY, f"eval.benchmarks[{i}].suite",
                f"must be one of {', '.join(REGISTRY)}, got {bench.suite!r}")
        require(bench.sample is None or bench.sample >= 1, f"eval.benchmarks[{i}].sample",
                "must be at least 1 (or null for all items)")
        require("sample" not in bench.options and "seed" not in bench.options, f"eval.benchmarks[{i}].options",
                "must not repeat sample or seed (they are keys of the benchmark itself)")
        benchmark_settings(bench, f"eval.benchmarks[{i}]")  # the suite's own checks, naming the key
    names = config.benchmark_dirs()
    require(len(set(names)) == len(names), "eval.benchmarks",
            f"need distinct output names, got {names}; set `name` on each")
    require(config.compare.resamples >= 1, "compare.resamples", "must be at least 1")
    require(config.eval.base_from != "", "eval.base_from", "must name a folder (or be left out)")
    _validate_objective(config, require)
    _check_report_to(config.report_to)


def _validate_objective(config: TrainConfig, require) -> None:
    """What each objective needs; the pairs' and lexicon's content is checked when they load."""
    from queerbias.pairs.taxonomy import GROUPS

    uses_pairs = config.objective in ("equalise", "dpo")
    require(not uses_pairs or bool(config.pairs.train or config.pairs.mine), "pairs.train",
            f"is required for objective {config.objective} (training pairs, e.g. queerbias-de:train)")
    require(uses_pairs or not config.pairs.train, "pairs.train",
            f"has no use for objective {config.objective} (only equalise and dpo train on pairs)")
    require(config.objective == "equalise" or not config.pairs.mine, "pairs.mine",
            "applies to objective equalise (mined pairs have no preference triples for dpo)")
    require(config.pairs.mine is None or bool(config.pairs.mine), "pairs.mine",
            "is empty; leave it out, or name sources (corpus, a JSONL file or corpus folder)")
    from queerbias.pairs.mining import LEXICONS

    for language in config.pairs.mine_lexicons or {}:
        require(language in LEXICONS, f"pairs.mine_lexicons.{language}",
                f"names a language without mining support; known: {', '.join(LEXICONS)}")
    require(config.pairs.batch_size >= 1, "pairs.batch_size", "must be at least 1")
    require(config.objective != "dpo" or config.kind != "masked", "objective",
            "dpo needs a causal LM (preference tuning scores continuations); this model is masked")
    for key in ("weight", "pair_term", "group_term", "sign_term", "clp_term"):
        require(getattr(config.equalise, key) >= 0, f"equalise.{key}", "must not be negative")
    terms = (config.equalise.pair_term + config.equalise.group_term + config.equalise.sign_term
             + config.equalise.clp_term)
    require(terms > 0, "equalise.pair_term", "group_term, sign_term and clp_term cannot all be 0")
    require(config.equalise.clp_positions is None or config.equalise.clp_positions >= 1,
            "equalise.clp_positions", "must be at least 1 (or null for every position)")
    require(config.equalise.clp_top_k is None or config.equalise.clp_top_k >= 1,
            "equalise.clp_top_k", "must be at least 1 (or null for the whole vocabulary)")
    require(config.equalise.temperature > 0, "equalise.temperature", "must be positive")
    require(config.pairs.groups_per_batch is None or config.pairs.groups_per_batch >= 1,
            "pairs.groups_per_batch", "must be at least 1")
    require(not config.cda.augment or config.objective == "equalise", "cda.augment",
            "applies to objective equalise (objective cda always augments; lm never does)")
    require(config.dpo.beta > 0, "dpo.beta", f"must be positive, got {config.dpo.beta}")
    require(config.dpo.max_length >= 8, "dpo.max_length", "must be at least 8 tokens")
    queer = [name for name, group in GROUPS.items() if group.side == "queer"]
    for i, name in enumerate(config.data.identities or []):
        require(name in queer, f"data.identities[{i}]",
                f"names unknown group {name!r}; known: {', '.join(queer)}")
    require(config.data.identities is None or bool(config.data.identities), "data.identities",
            "is empty; leave it out to keep every document")


def _check_report_to(report_to: str | list[str]) -> None:
    """Each destination must be a Trainer integration whose package is installed."""
    from transformers.integrations import get_available_reporting_integrations
    from transformers.integrations.integration_utils import INTEGRATION_TO_CALLBACK

    for name in [report_to] if isinstance(report_to, str) else report_to:
        if name == "none":
            continue
        if name not in INTEGRATION_TO_CALLBACK:
            raise QueerbiasError(f"config key 'report_to' must be 'none' or one of "
                                 f"{', '.join(sorted(INTEGRATION_TO_CALLBACK))}, got {name!r}")
        if name not in get_available_reporting_integrations():
            hint = " (pip install 'queerbias[tracking]')" if name == "tensorboard" else ""
            raise QueerbiasError(f"config key 'report_to': {name} is not installed{hint}")
