"""The study file: models × runs × seeds, the benchmarks every run is judged on, exclusions.

    output_dir: runs/study/NAME          # the STUDY folder (default: runs/study/<file stem>)
    models:     {NAME: SPEC, NAME: {model: SPEC, overrides: {KEY: VALUE}}}
    runs:       {NAME: CONFIG.yaml, NAME: {config: CONFIG.yaml, overrides: {objective: cda}}}
    seeds:      [0, 1, 2]
    benchmarks: [...]                    # the `eval.benchmarks` format, each naming its data
    exclude:    [{model: NAME, run: NAME, seed: S}]   # any of the three keys
    training:   {config: CONFIG.yaml, overrides: {...}}   # shared by every run
    accelerate_config: FILE              # optional: cells run under `accelerate launch` with it
    judge:      {guards: {knowledge: 5.0}, general_perplexity_pct: 5.0}   # which run passes (study/judging.py)

A cell's training config is the run's config file (else the shared one), then the shared
overrides, the run's, the model's, and last what the study sets itself (model, seed,
output_dir, eval.benchmarks, eval.base_from). Overrides are YAML mappings; nested ones
are dotted keys (`{equalise: {weight: 0.3}}` is `equalise.weight=0.3`). Relative paths
are relative to the working directory, as in training configs. Every problem is one
`QueerbiasError` naming the study key; the cells' training configs are checked by the
training loader in `cells.prepare`. `judge` changes no cell, so a study folder accepts a
file that differs from its own only there.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from queerbias.errors import QueerbiasError
from queerbias.options import MAX_SEED, from_mapping, to_dict
from queerbias.pairs.resolve import declared_part
from queerbias.study.judging import JudgeSettings, load_judge
from queerbias.suites.paths import folder_name_problem
from queerbias.train.benchmarks import BenchmarkSettings, folder_names
from queerbias.yamlio import load_yaml_mapping

KEYS = ("output_dir", "models", "runs", "seeds", "benchmarks", "exclude", "training", "accelerate_config", "judge")
#: keys that judge the cells' results and change no cell: a study folder accepts a file that differs only in them
REPORT_KEYS = ("judge",)
#: training config keys that the study sets per cell, and which study key decides them
SET_BY_STUDY = {"model": "models", "seed": "seeds", "output_dir": "output_dir",
                "eval.benchmarks": "benchmarks", "eval.base_from": "the shared base (STUDY/base/<model>)"}
EXCLUDE_KEYS = ("model", "run", "seed")


@dataclass(frozen=True)
class Source:
    """Where a training config comes from: a YAML file (or none) and dotted overrides."""

    config: str | None
    overrides: dict[str, object]

    def override_args(self) -> list[str]:
        """`key=value` arguments of `queerbias train` (values as JSON, which YAML reads back)."""
        return [f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in self.overrides.items()]


@dataclass(frozen=True)
class StudyConfig:
    output_dir: str
    models: dict[str, Source]  # Source.config holds the model spec
    runs: dict[str, Source]
    seeds: tuple[int, ...]
    benchmarks: list[dict]
    exclude: list[dict]
    training: Source
    accelerate_config: str | None = None
    judge: JudgeSettings = field(default_factory=JudgeSettings)

    def record(self) -> dict:
        """The study as study.yaml holds it (a study file itself: `queerbias study --config`)."""
        return {
            "output_dir": self.output_dir,
            "models": {name: {"model": m.config, "overrides": m.overrides} for name, m in self.models.items()},
            "runs": {name: {"config": r.config, "overrides": r.overrides} for name, r in self.runs.items()},
            "seeds": list(self.seeds),
            "benchmarks": self.benchmarks,
            "exclude": self.exclude,
            "training": {"config": self.training.config, "overrides": self.training.overrides},
            "accelerate_config": self.accelerate_config,
            "judge": to_dict(self.judge),
        }

    def same_study(self, other: StudyConfig) -> bool:
        """Whether two configs describe the same cells (the folder may have moved)."""
        mine, theirs = self.record(), other.record()
        for key in ("output_dir", *REPORT_KEYS):
            mine.pop(key)
            theirs.pop(key, None)
        return mine == theirs

    def excluded(self, model: str, run: str, seed: int) -> bool:
        cell = {"model": model, "run": run, "seed": seed}
        return any(all(cell[key] == value for key, value in rule.items()) for rule in self.exclude)


def load_study(path: str | Path, output_dir: str | None = None) -> StudyConfig:
    """Read and check a study file; `output_dir` (the CLI's --out) replaces its own."""
    path = Path(path)
    raw = load_yaml_mapping(path, what="study config")
    unknown = sorted(set(raw) - set(KEYS))
    if unknown:
        raise QueerbiasError(f"study key '{unknown[0]}' is unknown; known keys: {', '.join(KEYS)}")
    models = _named(raw, "models", lambda value, key: _model(value, key))
    runs = _named(raw, "runs", lambda value, key: _source(value, key, "config"))
    seeds = _seeds(raw.get("seeds"))
    study = StudyConfig(
        output_dir=output_dir or _string(raw.get("output_dir"), "output_dir", optional=True)
        or str(Path("runs") / "study" / path.stem),
        models=models, runs=runs, seeds=seeds,
        benchmarks=_benchmarks(raw.get("benchmarks")),
        exclude=_exclude(raw.get("exclude"), models, runs, seeds),
        training=_source(raw.get("training") or {}, "training", "config"),
        accelerate_config=_string(raw.get("accelerate_config"), "accelerate_config", optional=True),
        judge=load_judge(raw.get("judge"), _benchmark_suites(raw.get("benchmarks")),
                         _test_benchmarks(raw.get("benchmarks"))),
    )
    cells = [(m, r, s) for m in models for r in runs for s in seeds if not study.excluded(m, r, s)]
    if not cells:
        raise QueerbiasError("study key 'exclude' leaves no cell to run")
    return study


def _named(raw: dict, key: str, entry) -> dict[str, Source]:
    value = raw.get(key)
    if not isinstance(value, dict) or not value:
        raise QueerbiasError(f"study key '{key}' must be a non-empty mapping of names, got {value!r}")
    folded: dict[str, str] = {}
    for name in value:
        problem = folder_name_problem(name)
        if problem:
            raise QueerbiasError(f"study key '{key}.{name}' {problem}")
        if name.lower() in folded:
            raise QueerbiasError(f"study key '{key}': names '{folded[name.lower()]}' and '{name}' differ only "
                                 "in case; they would share a folder")
        folded[name.lower()] = name
    return {name: entry(item, f"{key}.{name}") for name, item in value.items()}


def _model(value, key: str) -> Source:
    if isinstance(value, str):
        value = {"model": value}
    source = _source(value, key, "model")
    if not source.config:
        raise QueerbiasError(f"study key '{key}.model' is required (a Hub id, folder or embedded:gemma-3-270m)")
    return source


def _source(value, key: str, file_key: str) -> Source:
    """`{<file_key>: STRING, overrides: MAPPING}`, or the string alone."""
    if isinstance(value, str) and file_key == "config":
        value = {"config": value}
    if not isinstance(value, dict):
        raise QueerbiasError(f"study key '{key}' must be a mapping with {file_key} and overrides, got {value!r}")
    unknown = sorted(set(value) - {file_key, "overrides"})
    if unknown:
        raise QueerbiasError(f"study key '{key}.{unknown[0]}' is unknown; known: {file_key}, overrides")
    overrides = value.get("overrides") or {}
    if not isinstance(overrides, dict):
        raise QueerbiasError(f"study key '{key}.overrides' must be a mapping of config keys, got {overrides!r}")
    flat = _flatten(overrides, f"{key}.overrides")
    for dotted in flat:
        if dotted in SET_BY_STUDY:
            raise QueerbiasError(f"study key '{key}.overrides.{dotted}': {dotted} is set by the study "
                                 f"({SET_BY_STUDY[dotted]})")
    return Source(_string(value.get(file_key), f"{key}.{file_key}", optional=True), flat)


def _flatten(mapping: dict, key: str, prefix: str = "") -> dict[str, object]:
    flat = {}
    for name, value in mapping.items():
        if not isinstance(name, str) or not name:
            raise QueerbiasError(f"study key '{key}': config key {name!r} must be a non-empty string")
        dotted = prefix + name
        if isinstance(value, dict) and value:
            flat |= _flatten(value, key, dotted + ".")
        else:
            flat[dotted] = value
    return flat


def _string(value, key: str, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise QueerbiasError(f"study key '{key}' must be a non-empty string, got {value!r}")
    return value


def _seeds(value) -> tuple[int, ...]:
    if not isinstance(value, list) or not value:
        raise QueerbiasError(f"study key 'seeds' must be a non-empty list of non-negative integers, got {value!r}")
    for index, seed in enumerate(value):
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise QueerbiasError(f"study key 'seeds[{index}]' must be a non-negative integer, got {seed!r}; seeds "
                                 f"are 0 to {MAX_SEED:,} (2^32 - 1)")
        if seed in value[:index]:
            raise QueerbiasError(f"study key 'seeds[{index}]': seed {seed} is listed twice")
    return tuple(value)


def _benchmarks(value) -> list[dict]:
    """Checked here for shape; the training loader checks each entry's contents per cell."""
    if not isinstance(value, list) or not value:
        raise QueerbiasError("study key 'benchmarks' must be a non-empty list in the eval.benchmarks format, "
                             f"got {value!r}")
    for index, bench in enumerate(value):
        if not isinstance(bench, dict):
            raise QueerbiasError(f"study key 'benchmarks[{index}]' must be a mapping, got {bench!r}")
        if not bench.get("data"):
            raise QueerbiasError(f"study key 'benchmarks[{index}].data' is required: every run of a study is "
                                 "judged on the same items, and a run's default data can depend on its objective")
    return value


def _benchmark_settings(value) -> dict[str, BenchmarkSettings]:
    """Folder name -> settings of each benchmark, named as the cells will name them."""
    settings = [from_mapping(BenchmarkSettings, bench, f"study key 'benchmarks[{index}]'")
                for index, bench in enumerate(_benchmarks(value))]
    return dict(zip(folder_names(settings), settings, strict=True))


def _benchmark_suites(value) -> dict[str, str]:
    return {name: bench.suite for name, bench in _benchmark_settings(value).items()}


def _test_benchmarks(value) -> tuple[str, ...]:
    """The benchmarks on a declared test part (queerbias-de-shapes:test): judged on nothing."""
    return tuple(name for name, bench in _benchmark_settings(value).items() if declared_part(bench.data) == "test")


def _exclude(value, models: dict, runs: dict, seeds: tuple[int, ...]) -> list[dict]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise QueerbiasError(f"study key 'exclude' must be a list of mappings (model, run, seed), got {value!r}")
    known = {"model": list(models), "run": list(runs), "seed": list(seeds)}
    for index, rule in enumerate(value):
        if not isinstance(rule, dict) or not rule or set(rule) - set(EXCLUDE_KEYS):
            raise QueerbiasError(f"study key 'exclude[{index}]' must be a mapping of model, run and/or seed, "
                                 f"got {rule!r}")
        for key, name in rule.items():
            if name not in known[key]:
                raise QueerbiasError(f"study key 'exclude[{index}].{key}' names {name!r}, which is not among the "
                                     f"study's {key}s: {', '.join(map(str, known[key]))}")
    return value
