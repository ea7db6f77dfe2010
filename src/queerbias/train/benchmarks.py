"""The benchmarks a training run evaluates: `eval.benchmarks` entries, their folders, their data.

A benchmark is any registered suite that evaluates the language model being trained
(`Declaration.no_training_reason` says why one cannot), with its data, a seeded sample and
options. Each gets one output folder inside `RUN/base/`, every `checkpoint-N/` and
`RUN/compare/`: its `name`, or without one the suite's historical name for its first
benchmark (its training companion's `folder_name`, `suites.companions.TrainingHooks`: `bias`
for the first pair benchmark, as every earlier run named it), else its data as `queerbias run` names folders (`winoqueer-v0`,
`queerbias-de:test` -> `queerbias-de-test`, a folder or file: its last path component), or
the suite's name when it evaluates the suite's default data; a name taken by an earlier
benchmark gets `-<suite>` and then a number. Run folders of earlier versions recorded
their names (`bias-<suite>`) in config.yaml and stay readable.

Torch-free: configs are checked from the suites' light declarations, and benchmark data read,
before any model loads.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass

from queerbias.errors import QueerbiasError
from queerbias.options import from_mapping, option, seed_option
from queerbias.pairs.resolve import declared_part
from queerbias.suites.paths import folder_name_problem, slug
from queerbias.suites.registry import DEFAULT_SUITE, companion, get_declaration, get_suite, names

log = logging.getLogger(__name__)


@dataclass
class BenchmarkSettings:
    suite: str = option(DEFAULT_SUITE, "a registered suite (`queerbias suites`)", choices=names)
    data: str | None = option(None, "what the suite evaluates, as `queerbias run SUITE --data` takes it (null: "
                                    "the suite's default data)")
    sample: int | None = option(200, "seeded subset size, as the suite's `sample` setting counts it (null: all "
                                     "items)", ge=1)
    seed: int = seed_option("seed of the subset")
    name: str | None = option(None, "output folder inside each checkpoint and in compare/ (default: see "
                                    "`train.benchmarks`)", check=folder_name_problem)
    options: dict = option(help="further settings of the suite (`queerbias run SUITE --help`)", factory=dict)
    optional: bool = option(False, "skip (with a warning) when `data` is not available offline")
    best: str | None = option(None, "best-checkpoint criterion of this benchmark's suite (default: compare.best, "
                                    "else the suite's first)")
    guard: float | None = option(None, "a guard benchmark: a checkpoint it refuses is chosen as best on no benchmark "
                                       "of the run. knowledge: its accuracy fell more than this many points; pairs "
                                       "(the validation shapes, queerbias-de-shapes:validation): its excess (the "
                                       "association's on a set with neutral predicates) rose more than this many "
                                       "points, or a group shifted towards the stereotype by the frame-level sign "
                                       "test. Never on a test split", ge=0)


def defaults(held_out: bool) -> list[BenchmarkSettings]:
    """What a run evaluates when `eval.benchmarks` is not given: the default suite's training companion
    says (`TrainingHooks.default_benchmarks`; pairs: held-out and out-of-distribution pair sets for a
    mitigation, queerbias-de for continued pretraining)."""
    entries = companion(DEFAULT_SUITE, "training").default_benchmarks(held_out)
    return [from_mapping(BenchmarkSettings, {"suite": DEFAULT_SUITE, **entry}, "eval.benchmarks (default)")
            for entry in entries]


def folder_names(benchmarks: list[BenchmarkSettings]) -> list[str]:
    """The output folder of each benchmark, in config order (the rule in the module docstring)."""
    taken: list[str] = []
    for bench in benchmarks:
        taken.append(bench.name if bench.name is not None else _default_name(bench, taken))
    return taken


def _default_name(bench: BenchmarkSettings, taken: list[str]) -> str:
    suite, folder = get_declaration(bench.suite), companion(bench.suite, "training").folder_name
    if folder and folder not in taken:
        return folder
    name = slug(bench.data) if bench.data else suite.name
    if name in taken:
        name = f"{name}-{suite.name}"
    unique, number = name, 2
    while unique in taken:
        unique, number = f"{name}-{number}", number + 1
    return unique


def check(benchmarks: list[BenchmarkSettings], best: str | None, require) -> None:
    """Each entry against its suite (its settings, that it can be trained against, its criterion),
    and distinct folders; `best` is `compare.best`."""
    require(bool(benchmarks), "eval.benchmarks", "is empty: a training run must be evaluated on at least one "
            "benchmark (leave the key out for the objective's defaults)")
    for i, bench in enumerate(benchmarks):
        where = f"eval.benchmarks[{i}]"
        require("sample" not in bench.options and "seed" not in bench.options, f"{where}.options",
                "must not repeat sample or seed (they are keys of the benchmark itself)")
        suite_settings(bench, where)
        require(bench.guard is None or declared_part(bench.data) != "test", f"{where}.guard",
                f"{bench.data} is a test split: it is judged on, never selected on (guard the run with the "
                "validation part)")
        criteria = get_declaration(bench.suite).criteria
        criterion, key = criterion_of(bench, i, best)
        require(criterion is None or criterion in criteria, key,
                f"names {criterion!r}, which is not a best-checkpoint criterion of suite {bench.suite} "
                f"(it has {', '.join(criteria) or 'none'})"
                + (f"; set {where}.best for that benchmark" if key == "compare.best" else ""))
    taken = folder_names(benchmarks)
    require(len(set(taken)) == len(taken), "eval.benchmarks", f"need distinct output names, got {taken}; set "
            "`name` on each")


def criterion_of(bench: BenchmarkSettings, index: int, best: str | None) -> tuple[str | None, str]:
    """(the best-checkpoint criterion of entry `index`, the config key that sets it): its own `best`, else
    `compare.best` (`best`); None: the suite's first."""
    return (bench.best, f"eval.benchmarks[{index}].best") if bench.best is not None else (best, "compare.best")


def check_base_figures(benchmarks: list[BenchmarkSettings], best: str | None, summaries: list[dict | None]) -> None:
    """Each entry's best-checkpoint criterion against the base's summary (`summaries`, in config order; None: not
    scored, an optional set that is absent): a criterion whose figure the data cannot give (`Criterion.available`:
    `association` on a set without neutral predicates, or a sample that fills no frame with both kinds) is refused
    once the base is scored, before the first step, not when the best checkpoint is chosen after the last. A test
    split is never selected on, so its criterion is not read."""
    for i, (bench, summary) in enumerate(zip(benchmarks, summaries, strict=True)):
        criterion, key = criterion_of(bench, i, best)
        rule = get_declaration(bench.suite).criteria.get(criterion) if criterion is not None else None
        if summary is None or rule is None or rule.available is None or declared_part(bench.data) == "test":
            continue
        if not rule.available(summary):
            raise QueerbiasError(f"config key '{key}': {criterion} needs {rule.needs} of every checkpoint, and the "
                                 f"base's {bench.data} has none; choose another criterion for this benchmark")


def suite_settings(bench: BenchmarkSettings, where: str, sequences_per_batch: int | str | None = None):
    """The suite settings of one entry: its options, sample and seed, checked and named by the entry's key; with
    `sequences_per_batch` (`eval.sequences_per_batch`) as the suite takes a training run's scorer batch size
    (`Declaration.with_scorer_batch`)."""
    suite = get_declaration(bench.suite)
    if suite.no_training_reason:
        raise QueerbiasError(f"config key '{where}.suite': {bench.suite} cannot be a training benchmark: "
                             f"{suite.no_training_reason}")
    settings = from_mapping(suite.Settings, {**bench.options, "sample": bench.sample, "seed": bench.seed},
                            f"{where}.options")
    return settings if sequences_per_batch is None else suite.with_scorer_batch(settings, sequences_per_batch)


def resolve(config, held_out: bool) -> tuple[object, list[str]]:
    """The config with the benchmarks this run evaluates: each named by its folder, with the data its
    suite takes for it (the training companion's `data`: pairs judge a mitigation on held-out pairs), and
    optional benchmarks whose data is not on this machine left out; returns it and those skipped."""
    resolved = copy.deepcopy(config)
    kept, skipped = [], []
    for bench, name in zip(resolved.eval.benchmarks, folder_names(config.eval.benchmarks), strict=True):
        suite, hooks = get_declaration(bench.suite), companion(bench.suite, "training")
        bench.data = hooks.data(suite, bench.data, held_out)
        if bench.optional and not hooks.available_offline(suite, bench.data):
            log.warning("benchmark %s (%s) is not available offline; skipped", name, bench.data)
            skipped.append(name)
            continue
        bench.name = name
        kept.append(bench)
    resolved.eval.benchmarks = kept
    return resolved, skipped


def load_data(config) -> dict[str, tuple]:
    """Each benchmark's items and data reference (`Suite.load_data`), by folder: read once per run,
    before any model loads, and evaluated at every checkpoint."""
    return {name: get_suite(bench.suite).load_data(bench.data, suite_settings(bench, f"eval.benchmarks[{index}]"))
            for index, (bench, name) in enumerate(zip(config.eval.benchmarks, config.benchmark_dirs(), strict=True))}
