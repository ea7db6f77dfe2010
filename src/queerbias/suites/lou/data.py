"""Reading Lou: instances with their six reformulations, and the fine-tuning splits.

Lou is CC BY-NC 4.0 and never shipped with queerbias. A data folder is laid out like
the upstream repository (`lou/<task>.jsonl`, `tasks/<task>/{train,dev}.jsonl`): a
user's checkout, or the cache copy that is downloaded file by file on first use
(through the benchmark registry's download, so every cached file has a checked sha256).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from queerbias.errors import DataError, QueerbiasError
from queerbias.fileio import iter_jsonl
from queerbias.pairs.registry import BenchmarkInfo, fetch, sha256_file, shared_copy
from queerbias.yamlio import load_packaged_yaml

ORIGINAL = "original"
#: the scope of figures pooled over the tasks
POOLED = "all"
SPLITS = ("train", "dev")


@dataclass(frozen=True)
class TaskInfo:
    """A Lou task: its label names (index = label id), optional second input field, and
    whether classifiers see only the text's first tokens (upstream cuts GermEval texts)."""

    name: str
    description: str
    labels: tuple[str, ...]
    text_pair: str | None = None
    truncate_text: bool = False


@dataclass(frozen=True)
class LouSpec:
    """What `data/lou/lou.yaml` declares: provenance, strategies and tasks."""

    homepage: str
    raw_base: str
    url_verified: bool
    licence: str
    citation: str
    strategies: tuple[str, ...]
    tasks: dict[str, TaskInfo]


@dataclass(frozen=True)
class Instance:
    """One Lou instance: the original text, its reformulation per strategy, the task label."""

    task: str
    index: int  # 0-based line in lou/<task>.jsonl, stable across samples
    label: int
    original: str
    reformulations: dict[str, str]
    text_pair: str | None = None

    def text(self, strategy: str) -> str:
        return self.original if strategy == ORIGINAL else self.reformulations[strategy]


@dataclass
class LouTask:
    """The instances of one task as read from one file, with that file's checksum."""

    info: TaskInfo
    instances: list[Instance]
    path: Path
    checksum: str
    sample: dict | None = field(default=None)

    @property
    def name(self) -> str:
        return self.info.name

    def describe(self) -> dict:
        return {"task": self.name, "path": str(self.path), "checksum": self.checksum,
                "n": len(self.instances), "sample": self.sample}


@dataclass(frozen=True)
class Example:
    """A fine-tuning example: text, optional second segment, label id."""

    text: str
    text_pair: str | None
    label: int


@cache
def lou_spec() -> LouSpec:
    raw = load_packaged_yaml("data/lou/lou.yaml")
    tasks = {name: TaskInfo(name, entry["description"], tuple(entry["labels"]), entry.get("text_pair"),
                            bool(entry.get("truncate_text", False)))
             for name, entry in raw["tasks"].items()}
    return LouSpec(raw["homepage"], raw["raw_base"], bool(raw["url_verified"]), raw["licence"],
                   raw["citation"], tuple(s["column"] for s in raw["strategies"]), tasks)


def resolve_tasks(names: list[str] | None, data_dir: str | Path | None = None) -> list[str]:
    """The requested task names, checked against the spec.

    None means every public task, or, for a user's data folder, those whose
    lou/<task>.jsonl it holds.
    """
    known = lou_spec().tasks
    if not names and data_dir is not None:
        present = [t for t in known if (Path(data_dir).expanduser() / "lou" / f"{t}.jsonl").is_file()]
        if not present:
            raise QueerbiasError(f"{data_dir} holds no lou/<task>.jsonl of a known task ({', '.join(known)})")
        return present
    if not names:
        return list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise QueerbiasError(f"unknown Lou task(s) {unknown}; known: {', '.join(known)}")
    return list(dict.fromkeys(names))


def data_file(relpath: str, data_dir: str | Path | None) -> Path:
    """`relpath` below a user's data folder, or the verified cache copy (downloaded if missing)."""
    if data_dir is not None:
        path = Path(data_dir).expanduser() / relpath
        if not path.is_file():
            raise QueerbiasError(f"{path} not found; --data must be a folder laid out like "
                                 f"{lou_spec().homepage} (lou/<task>.jsonl, tasks/<task>/train.jsonl)")
        return path
    return fetch(_cache_info(relpath))


def local_file(relpath: str, data_dir: str | Path | None) -> Path | None:
    """`relpath` where it is on this machine without a download: below a user's data folder, or the
    verified cache or shared copy; None where it is not."""
    if data_dir is not None:
        path = Path(data_dir).expanduser() / relpath
        return path if path.is_file() else None
    info = _cache_info(relpath)
    return fetch(info) if info.is_cached() or shared_copy(info) is not None else None


def _cache_info(relpath: str) -> BenchmarkInfo:
    """The download of one upstream file, cached as `lou/<folder>/<file>`."""
    spec = lou_spec()
    folder, _, filename = relpath.rpartition("/")
    return BenchmarkInfo(name=f"lou/{folder}", description=f"Lou {relpath}", language="de",
                         licence=spec.licence, citation=spec.citation, homepage=spec.homepage,
                         layout="lou", urls=(f"{spec.raw_base}/{relpath}",),
                         url_verified=spec.url_verified, filename=filename)


def load_task(task: str, data_dir: str | Path | None = None) -> LouTask:
    """All instances of `task` from lou/<task>.jsonl, every field checked."""
    info = lou_spec().tasks[resolve_tasks([task])[0]]
    path = data_file(f"lou/{task}.jsonl", data_dir)
    instances = []
    for row, record in iter_jsonl(path):
        texts = {name: _text(record, name, path, row) for name in (ORIGINAL, *lou_spec().strategies)}
        instances.append(Instance(
            task=task, index=row - 1, label=_label(record, info, path, row), original=texts.pop(ORIGINAL),
            reformulations=texts,
            text_pair=_text(record, info.text_pair, path, row) if info.text_pair else None))
    if not instances:
        raise DataError(path, "holds no instances")
    return LouTask(info, instances, path, sha256_file(path))


def load_split(task: str, split: str, data_dir: str | Path | None = None) -> tuple[list[Example], Path]:
    """The original (unreformulated) train or dev split of `task`, and the file it came from."""
    if split not in SPLITS:
        raise QueerbiasError(f"split must be one of {SPLITS}, got {split!r}")
    path = data_file(f"tasks/{task}/{split}.jsonl", data_dir)
    return read_split(task, path), path


def read_split(task: str, path: Path) -> list[Example]:
    """The examples of one split file of `task`, every field checked."""
    info = lou_spec().tasks[resolve_tasks([task])[0]]
    examples = [Example(_text(record, "text", path, row),
                        _text(record, info.text_pair, path, row) if info.text_pair else None,
                        _label(record, info, path, row))
                for row, record in iter_jsonl(path)]
    if not examples:
        raise DataError(path, "holds no examples")
    return examples


def sample_task(task: LouTask, n: int | None, seed: int = 0) -> LouTask:
    """A seeded subset of n instances in file order (the whole task when n is None or larger)."""
    if n is None or n >= len(task.instances):
        return task
    if n < 1:
        raise QueerbiasError(f"sample size must be at least 1, got {n}")
    chosen = sorted(random.Random(f"{seed}:{task.name}").sample(range(len(task.instances)), n))
    return LouTask(task.info, [task.instances[i] for i in chosen], task.path, task.checksum,
                   sample={"n": n, "seed": seed, "of": len(task.instances)})


def _text(record: dict, name: str, path: Path, row: int) -> str:
    value = record.get(name)
    if not isinstance(value, str) or not value.strip():
        raise DataError(path, "missing or empty text", row=row, field=name)
    return value


def _label(record: dict, info: TaskInfo, path: Path, row: int) -> int:
    value = record.get("label")
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < len(info.labels):
        raise DataError(path, f"label must be an integer in 0..{len(info.labels) - 1} "
                              f"({', '.join(info.labels)}), got {value!r}", row=row, field="label")
    return value
