"""A training run as its model card reads it: config, metrics, compare reports, the base model.

Read from the run folder alone (`config.yaml`, `metrics.jsonl`, `compare/<benchmark>/delta.json`,
the base model's first summary and `final/`), checked as it is read. The config is read as a
mapping, not as a `TrainConfig`: keys a newer or older queerbias wrote (`objective`, the
`record` of a mitigation run) are read where present and have their defaults where not.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from huggingface_hub.utils import HFValidationError, validate_repo_id

from queerbias.errors import QueerbiasError
from queerbias.fileio import existing_folder
from queerbias.models.embedded import EMBEDDED_MODELS, PREFIX, is_embedded
from queerbias.suites.paths import SUMMARY_FILE
from queerbias.suites.registry import LEGACY_SUITE
from queerbias.suites.store import read_json_file
from queerbias.train.checkpoints import METRICS, holds_weights, read_metrics
from queerbias.train.config import migrate
from queerbias.train.objectives.protocol import Objective
from queerbias.train.objectives.registry import get_objective
from queerbias.train.objectives.registry import names as objective_names
from queerbias.yamlio import load_yaml_mapping

#: written by `train.runner` (its CONFIG_NAME; not imported, as the runner loads torch)
CONFIG_FILE = "config.yaml"
COMPARE_DIR = "compare"
DELTA_FILE = "delta.json"


@dataclass(frozen=True)
class BaseModel:
    """The base model as the Hub knows it: its id and licence where known, and a sentence for the card."""

    spec: str
    hub_id: str | None
    licence: str | None
    note: str  # what the base is, as a phrase: "the local model `...`"


@dataclass
class Benchmark:
    """One benchmark of the run and its compare report (None when missing or out of date: `missing` says)."""

    name: str
    suite: str
    data: str
    delta: dict | None
    missing: str = ""

    @property
    def data_ref(self) -> dict:
        """What the compare report says was evaluated: name, checksum, n_items, language, sample."""
        return ((self.delta or {}).get("meta") or {}).get("data") or {}

    @property
    def final(self) -> dict | None:
        """The comparison of the base with the last checkpoint (the weights in final/)."""
        if self.delta is None:
            return None
        return max(self.delta["comparisons"], key=lambda c: c["after"].get("step") or 0)


@dataclass
class TrainingRun:
    """What a card is made of, read from the run folder alone."""

    path: Path
    config: dict
    metrics: list[dict]
    benchmarks: list[Benchmark]
    final_weights: bool
    base_meta: dict  # meta of the base model's first benchmark summary ({} without benchmarks)

    @property
    def objective(self) -> str:
        return self.config.get("objective") or "lm"

    @property
    def declared(self) -> Objective | None:
        """The run's objective as registered here (None: an objective this queerbias does not know)."""
        return get_objective(self.objective) if self.objective in objective_names() else None

    @property
    def record(self) -> dict:
        """What a mitigation run derived from its config (held-out check, corpus counts, ...)."""
        return self.config.get("record") or {}

    @property
    def lora(self) -> bool:
        return self.config.get("method", "lora") == "lora"

    @property
    def last_step(self) -> int | None:
        return self.metrics[-1]["step"] if self.metrics else None

    @property
    def kind(self) -> str | None:
        """causal or masked: as configured, else as the base model's evaluation found it."""
        return self.config.get("kind") or (self.base_meta.get("model") or {}).get("kind")

    @property
    def base(self) -> BaseModel:
        model = self.base_meta.get("model") or {}
        return base_model(str(self.config.get("model", "")), model.get("revision"), bool(model))

    def setting(self, dotted: str):
        """A config value by its dotted key (`lora.r`); None where the run's config lacks it."""
        value = self.config
        for part in dotted.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return value

    @property
    def verdict(self) -> tuple[dict | None, dict[str, str]]:
        """The run's verdict and its guards' refusals (step -> why), as its compare reports keep them
        (`comparison.checkpoints.run_verdict`); None for a run written before they did."""
        delta = next((b.delta for b in self.benchmarks if b.delta is not None and "verdict" in b.delta), None)
        return (None, {}) if delta is None else (delta["verdict"], delta.get("refused") or {})

    def incomplete(self) -> list[str]:
        """Why the card cannot report a finished evaluation (empty: it can)."""
        reasons = [] if self.final_weights else ["final/ holds no trained weights: the run did not finish"]
        if not self.metrics:
            reasons.append(f"{METRICS} has no evaluation of the base model")
        reasons += [f"{b.name}: {b.missing}" for b in self.benchmarks if b.delta is None]
        return reasons


# -- reading the run ----------------------------------------------------------------------

def read_run(run_dir: str | Path) -> TrainingRun:
    """The run folder's config, metrics and compare reports, checked as they are read."""
    run_dir = existing_folder(run_dir, "training run folder")
    if not (run_dir / CONFIG_FILE).is_file():
        raise QueerbiasError(f"{run_dir}: not a training run (no {CONFIG_FILE})")
    config = migrate(load_yaml_mapping(run_dir / CONFIG_FILE, what="saved run config"), warn=False)  # moved keys
    metrics = read_metrics(run_dir)
    last_step = metrics[-1]["step"] if metrics else None
    named = (metrics[0].get("benchmarks") or {}) if metrics else {}
    benchmarks = [_benchmark(run_dir, name, entry, last_step) for name, entry in named.items()]
    base_meta = {}
    if benchmarks:
        summary = run_dir / "base" / benchmarks[0].name / SUMMARY_FILE
        base_meta = read_json_file(summary, "run summary").get("meta", {}) if summary.is_file() else {}
    return TrainingRun(run_dir, config, metrics, benchmarks, holds_weights(run_dir / "final"), base_meta)


def _benchmark(run_dir: Path, name: str, entry: dict, last_step: int | None) -> Benchmark:
    path = run_dir / COMPARE_DIR / name / DELTA_FILE
    benchmark = Benchmark(name, entry.get("suite", LEGACY_SUITE), entry.get("data") or "", None)
    if not last_step:
        benchmark.missing = "no checkpoint was evaluated"
    elif not path.is_file():
        benchmark.missing = f"no compare report ({COMPARE_DIR}/{name}/{DELTA_FILE})"
    else:
        document = read_json_file(path, "compare report")
        if not isinstance(document, dict) or not document.get("comparisons"):
            raise QueerbiasError(f"{path}: not a compare report (no comparisons)")
        benchmark.delta = document
        step = benchmark.final["after"].get("step")
        if step != last_step:
            benchmark.delta, benchmark.missing = None, (f"the compare report ends at step {step}, the run's "
                                                        f"last checkpoint is step {last_step}")
    return benchmark


def base_model(spec: str, revision: str | None, recorded: bool) -> BaseModel:
    """The Hub id behind a model spec: the embedded model's upstream, a Hub id the run loaded
    (it recorded a revision), or none for a local folder. `recorded`: whether the run recorded
    how the base was loaded (without a benchmark it did not, and a spec that is a valid repo id
    and not a folder here is taken for a Hub id)."""
    if is_embedded(spec):
        entry = EMBEDDED_MODELS.get(spec[len(PREFIX):])
        if entry is not None and entry.upstream is None:  # built here (embedded:tiny)
            return BaseModel(spec, None, entry.licence, f"queerbias's `{spec}`: {entry.description}")
        if entry is not None:
            return BaseModel(spec, entry.upstream, entry.licence, (
                f"queerbias's embedded copy of [{entry.upstream}](https://huggingface.co/{entry.upstream}) "
                f"(`{spec}`): {entry.description}, not the original weights, so the figures below hold for this "
                f"copy and will differ slightly on {entry.upstream} itself"))
    try:
        validate_repo_id(spec)
        hub = revision is not None if recorded else not Path(spec).exists()
    except HFValidationError:
        hub = False
    if hub:
        at = f" at revision `{revision}`" if revision else ""
        return BaseModel(spec, spec, None, f"[{spec}](https://huggingface.co/{spec}){at}")
    return BaseModel(spec, None, None, f"the local model `{spec}`, which has no Hub id on record (add "
                                       "`base_model` to this card by hand before publishing)")
