"""Every key of every shipped config is read by a typed field (issue 47): an editor follows it from the YAML to
the dataclass field, and from there to what reads it. A training config's keys resolve to `TrainConfig`'s fields,
its sections' and each objective's own `Config`; a benchmark entry's to `BenchmarkSettings` and its `options` to
its suite's `Settings`; a study file's to `StudyConfig`, each of its models, runs and shared training to a
`Source` (`model` is its `config`), the overrides to the training config's fields, `judge` to `JudgeSettings`.
The accelerate configs (configs/accelerate/) are accelerate's own files, which no queerbias class reads."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest
import yaml

from queerbias.study.config import EXCLUDE_KEYS, Source, StudyConfig, load_study
from queerbias.study.judging import JudgeSettings
from queerbias.suites.registry import get_declaration
from queerbias.train.benchmarks import BenchmarkSettings
from queerbias.train.config import TrainConfig, load_config
from queerbias.train.objectives.registry import list_objectives

REPO = Path(__file__).resolve().parents[2]
CONFIGS = sorted((REPO / "configs").glob("*.yaml")) + sorted(REPO.glob("research/*/configs/*.yaml"))


def _dataclass_in(tp) -> tuple[type | None, bool]:
    """(the dataclass a field's type holds, whether as a list of them)."""
    if dataclasses.is_dataclass(tp):
        return tp, False
    for arg in typing.get_args(tp):
        found, listed = _dataclass_in(arg)
        if found is not None:
            return found, listed or typing.get_origin(tp) is list
    return None, False


def _walk(cls: type, mapping: dict, prefix: str, found: list[str]) -> list[str]:
    """The keys of `mapping` that no field of `cls` reads (nested sections, lists of entries and a benchmark's
    suite options followed); every key read is appended to `found` as "key -> Class.field"."""
    unread = []
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    for key, value in mapping.items():
        if key not in names:
            unread.append(f"{prefix}{key}")
            continue
        found.append(f"{prefix}{key} -> {cls.__name__}.{key}")
        nested, listed = _dataclass_in(hints[key])
        if cls is BenchmarkSettings and key == "options":
            suite = get_declaration(mapping.get("suite") or BenchmarkSettings.suite)
            unread += _walk(suite.Settings, value, f"{prefix}{key}.", found)
        elif nested is not None and listed and isinstance(value, list):
            for index, item in enumerate(value):
                unread += _walk(nested, item, f"{prefix}{key}[{index}].", found)
        elif nested is not None and isinstance(value, dict):
            unread += _walk(nested, value, f"{prefix}{key}.", found)
    return unread


def _training(raw: dict, prefix: str, found: list[str]) -> list[str]:
    """A training config's keys: the core ones and each objective's section."""
    own = {objective.name: objective.Config for objective in list_objectives() if objective.Config}
    unread = _walk(TrainConfig, {k: v for k, v in raw.items() if k not in own}, prefix, found)
    for name, section in raw.items():
        if name in own:
            unread += _walk(own[name], section or {}, f"{prefix}{name}.", found)
    return unread


def _study(raw: dict, found: list[str]) -> list[str]:
    unread = _walk(StudyConfig, {k: v for k, v in raw.items() if k not in ("models", "runs", "training", "benchmarks",
                                                                          "judge", "exclude")}, "", found)
    source = {f.name for f in dataclasses.fields(Source)}
    for key in ("models", "runs", "training"):
        entries = ({key: raw[key]} if key in raw else {}) if key == "training" else raw.get(key) or {}
        for name, entry in entries.items():
            where = key if key == "training" else f"{key}.{name}"
            found.append(f"{where} -> StudyConfig.{key}")
            if not isinstance(entry, dict):
                continue
            read = {"model" if key == "models" else "config": "config", "overrides": "overrides"}
            unread += [f"{where}.{k}" for k in entry if read.get(k) not in source]
            found += [f"{where}.{k} -> Source.{read[k]}" for k in entry if read.get(k) in source]
            unread += _training(entry.get("overrides") or {}, f"{where}.overrides.", found)
    for index, entry in enumerate(raw.get("benchmarks") or []):
        unread += _walk(BenchmarkSettings, entry, f"benchmarks[{index}].", found)
    unread += _walk(JudgeSettings, raw.get("judge") or {}, "judge.", found)
    unread += [f"exclude[{i}].{k}" for i, rule in enumerate(raw.get("exclude") or []) for k in rule
               if k not in EXCLUDE_KEYS]
    return unread


def _is_study(raw: dict) -> bool:
    return "runs" in raw


@pytest.mark.parametrize("path", CONFIGS, ids=lambda path: str(path.relative_to(REPO)))
def test_every_key_of_a_shipped_config_is_a_typed_field(path, monkeypatch):
    monkeypatch.chdir(REPO)  # a study file names its training configs relative to the checkout
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    found: list[str] = []
    unread = _study(raw, found) if _is_study(raw) else _training(raw, "", found)
    assert unread == [] and found
    assert load_study(path) if _is_study(raw) else load_config(path)  # and it still loads


def test_the_walk_finds_a_key_no_field_reads():
    found: list[str] = []
    raw = {"model": "m", "equalise": {"pairs_per_batch": 4, "batch_size": 4},
           "eval": {"benchmarks": [{"suite": "pairs", "options": {"sample_unit": "frame", "unit": 1}}]}}
    assert _training(raw, "", found) == ["eval.benchmarks[0].options.unit", "equalise.batch_size"]
    assert "equalise.pairs_per_batch -> EqualiseConfig.pairs_per_batch" in found
    assert "eval.benchmarks[0].options.sample_unit -> PairSettings.sample_unit" in found
