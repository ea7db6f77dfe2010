"""What a study's cells wrote, gathered over seeds: per group and model, and per method.

Everything is read from the run folders' layout, generically for any suite: a cell's
`compare/<benchmark>/delta.json` (its last comparison: base against the final
checkpoint), the item rows of `base/<benchmark>/` and `checkpoint-<step>/<benchmark>/`,
`metrics.jsonl` (both perplexities, first and last line) and the launches file (time).

Over the S seeds of one model and run (one shared base, so the same items and the same
"before" in every seed):
- after: the mean of the seeds' figures; change: the mean of the seeds' changes;
- spread of the change over seeds: min–max for 2 seeds, the sample SD (ddof 1) for 3 or
  more, none for 1;
- interval: the mean over seeds of each run's own bootstrap interval (its lower ends
  averaged, its upper ends averaged), not an interval over seeds;
- pooled paired test (group tables): per item, the mean over seeds of its value after,
  against its value before; binary measures: the exact sign test of those per-item mean
  changes (`paired_stats.sign_test`; with one seed, the exact McNemar test), continuous:
  the comparator's test (`delta.json`'s `soft_test`, Wilcoxon signed-rank by default) of
  the per-item means after against the values before; statistic measures (one figure per
  cell, no items): none. Holm-corrected across the entries of a scope (the identity
  groups), per measure; Overall uncorrected, as in `queerbias compare`;
- marker: the stars of the Holm-adjusted pooled p, shown only when every seed changed in
  the same direction. In the method table (comparison-level figures such as the distance
  to indifference) the marker says that every seed's own test had p < .05, all in the
  same direction.

A model and run lacking a seed (a cell not finished, a benchmark it skipped) gets no
figures, only what is missing: `StudyState.complete` is False and the report says so.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from queerbias.comparison.compare import soft_test as soft_test_of
from queerbias.comparison.runs import align_rows
from queerbias.errors import QueerbiasError
from queerbias.report.paired_stats import adjust_pvalues, sign_test, stars
from queerbias.study.cells import BASE_DIR, RUNS_DIR, STUDY_FILE, Cell, read_plan
from queerbias.study.config import StudyConfig, load_study
from queerbias.study.execution import last_line
from queerbias.suites.paths import SUMMARY_FILE
from queerbias.suites.protocol import BINARY, CONTINUOUS, OVERALL
from queerbias.suites.registry import get_declaration
from queerbias.suites.store import load_run, read_json_file
from queerbias.train.checkpoints import read_metrics
from queerbias.yamlio import load_yaml_mapping

DELTA = Path("compare") / "{benchmark}" / "delta.json"


@dataclass(frozen=True)
class OverSeeds:
    """One figure of one model and run, per seed: before, after, and the run's interval of the change."""

    befores: tuple[float, ...]
    afters: tuple[float, ...]
    cis: tuple[tuple[float, float] | None, ...] = ()
    ps: tuple[float | None, ...] = ()

    @classmethod
    def of(cls, befores, afters, cis=(), ps=()) -> OverSeeds | None:
        """None where a seed lacks the figure (nothing is averaged over fewer seeds)."""
        if not afters or any(v is None for v in (*befores, *afters)):
            return None
        return cls(tuple(map(float, befores)), tuple(map(float, afters)), tuple(cis), tuple(ps))

    @property
    def seeds(self) -> int:
        return len(self.afters)

    @property
    def before(self) -> float:
        return statistics.fmean(self.befores)

    @property
    def after(self) -> float:
        return statistics.fmean(self.afters)

    @property
    def deltas(self) -> tuple[float, ...]:
        return tuple(a - b for a, b in zip(self.afters, self.befores, strict=True))

    @property
    def delta(self) -> float:
        return statistics.fmean(self.deltas)

    @property
    def spread(self) -> tuple[str, float, float] | None:
        """("range", min, max) for 2 seeds, ("sd", sd, sd) for 3 or more, None for 1."""
        if self.seeds == 2:
            return ("range", min(self.deltas), max(self.deltas))
        if self.seeds >= 3:
            sd = statistics.stdev(self.deltas)
            return ("sd", sd, sd)
        return None

    @property
    def ci(self) -> tuple[float, float] | None:
        if not self.cis or any(c is None or None in c for c in self.cis):
            return None
        return (statistics.fmean(c[0] for c in self.cis), statistics.fmean(c[1] for c in self.cis))

    @property
    def agree(self) -> bool:
        """Every seed changed the figure, all in the same direction."""
        return all(d > 0 for d in self.deltas) or all(d < 0 for d in self.deltas)

    @property
    def relative(self) -> float | None:
        """Mean over seeds of the change in percent of the seed's own before."""
        if any(b == 0 for b in self.befores):
            return None
        return statistics.fmean(100.0 * (a - b) / b for a, b in zip(self.afters, self.befores, strict=True))

    def every_seed_significant(self) -> bool:
        return bool(self.ps) and all(p is not None and p < 0.05 for p in self.ps) and self.agree


@dataclass(frozen=True)
class GroupFigure:
    figure: OverSeeds
    p_pooled: float | None
    p_adjusted: float | None

    @property
    def marker(self) -> str:
        return stars(self.p_adjusted) if self.p_adjusted is not None and self.figure.agree else ""


@dataclass
class CellRecord:
    cell: Cell
    status: str  # finished, failed, not run, unfinished
    launches: list[dict]
    deltas: dict[str, dict] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    metrics: list[dict] = field(default_factory=list)

    @property
    def last_line(self) -> str:
        return last_line(self.cell.log_file) if self.status == "failed" else ""

    @property
    def seconds(self) -> float | None:
        """Wall time over every launch, an interrupted one up to its last write to the log."""
        return sum(launch.get("seconds") or 0 for launch in self.launches) if self.launches else None

    @property
    def interrupted(self) -> int:
        """Launches killed with their launcher (their end never recorded)."""
        return sum(bool(launch.get("interrupted")) for launch in self.launches)


@dataclass
class StudyState:
    root: Path
    study: StudyConfig
    records: list[CellRecord]
    #: cell folders under STUDY/runs/ that the study no longer has (seeds, runs or models dropped
    #: from the study file): never aggregated, listed in the report
    dropped: list[str] = field(default_factory=list)

    @property
    def missing(self) -> list[CellRecord]:
        return [r for r in self.records if r.status != "finished"]

    @property
    def complete(self) -> bool:
        return not self.missing and not any(self.unevaluated(b) for b in self.benchmarks)

    @property
    def benchmarks(self) -> list[str]:
        return list(dict.fromkeys(b for r in self.records for b in r.cell.benchmarks))

    def skipped_everywhere(self, benchmark: str) -> bool:
        """A benchmark no finished cell evaluated, because every one skipped it (data not on the machine)."""
        finished = [r for r in self.records if r.status == "finished"]
        return bool(finished) and all(benchmark in r.skipped for r in finished)

    def unevaluated(self, benchmark: str) -> list[str]:
        """Finished cells without this benchmark's comparison (while others have it)."""
        if self.skipped_everywhere(benchmark):
            return []
        return [r.cell.name for r in self.records if r.status == "finished" and benchmark not in r.deltas]

    def groups(self, model: str, run: str) -> list[CellRecord]:
        return [r for r in self.records if r.cell.model == model and r.cell.run == run]

    def pairs(self) -> list[tuple[str, str]]:
        """(run, model) with at least one cell, in the study's order."""
        present = {(r.cell.run, r.cell.model) for r in self.records}
        return [(run, model) for run in self.study.runs for model in self.study.models if (run, model) in present]

    def seeds_of(self, run: str, model: str, benchmark: str | None = None) -> tuple[list[CellRecord], list[str]]:
        """The cells of a model and run, and what keeps them from being aggregated (empty: nothing)."""
        records = self.groups(model, run)
        missing = [r.cell.name for r in records if r.status != "finished"
                   or (benchmark is not None and benchmark not in r.deltas)]
        return records, missing


def read_state(root: Path) -> StudyState:
    """The study folder as the cells left it."""
    root = Path(root)
    if not (root / STUDY_FILE).is_file():
        raise QueerbiasError(f"{root}: not a study folder (no {STUDY_FILE})")
    study = load_study(root / STUDY_FILE, output_dir=str(root))
    cells = read_plan(root)
    planned = {cell.folder.resolve() for cell in cells}
    dropped = sorted(str(folder.relative_to(root)) for folder in root.glob(f"{RUNS_DIR}/*/*/seed-*")
                     if folder.is_dir() and folder.resolve() not in planned)
    return StudyState(root, study, [_record(cell) for cell in cells], dropped)


def _record(cell: Cell) -> CellRecord:
    """A cell's status: finished (its model card written), failed (its last launch ended with an
    error), unfinished (started: a launch, a config.yaml or a checkpoint, but no final) or not run."""
    launches = cell.launches()
    if not cell.finished():
        status = ("failed" if launches and launches[-1].get("returncode") not in (0, None)
                  else "unfinished" if cell.started() else "not run")
        return CellRecord(cell, status, launches)
    config = load_yaml_mapping(cell.folder / "config.yaml", what="saved run config")
    skipped = list((config.get("record") or {}).get("skipped_benchmarks") or [])
    deltas = {}
    for benchmark in cell.benchmarks:
        path = cell.folder / str(DELTA).format(benchmark=benchmark)
        if path.is_file():
            deltas[benchmark] = read_json_file(path, "compare report")
    metrics = read_metrics(cell.folder)
    return CellRecord(cell, "finished", launches, deltas, skipped, metrics)


# -- group tables ---------------------------------------------------------------------------

@dataclass
class GroupTable:
    """One benchmark and scope: entries (rows) × models (columns), per run and measure."""

    benchmark: str
    suite: str
    scope: str
    entries: list[str]
    measures: list[dict]
    #: (run, model) -> (entry, measure name) -> figure; absent (run, model): see `missing`
    figures: dict[tuple[str, str], dict[tuple[str, str], GroupFigure]]
    missing: dict[tuple[str, str], list[str]]


def group_tables(state: StudyState, benchmark: str) -> list[GroupTable]:
    """One table per scope of the benchmark's suite (pairs: the identity groups)."""
    documents = [r.deltas[benchmark] for r in state.records if benchmark in r.deltas]
    if not documents:
        return []
    first = documents[0]
    last = first["comparisons"][-1]
    measures = [m for m in first["measures"] if f"delta_{m['name']}" in last[OVERALL]]
    tables = []
    for scope in first["scopes"]:
        entries = list(dict.fromkeys(name for d in documents for name in d["comparisons"][-1].get(scope, {})))
        table = GroupTable(benchmark, first["suite"], scope, entries + [OVERALL], measures, {}, {})
        for run, model in state.pairs():
            records, missing = state.seeds_of(run, model, benchmark)
            if missing:
                table.missing[(run, model)] = missing
            else:
                table.figures[(run, model)] = _group_figures(records, benchmark, scope, table.entries, measures)
        tables.append(table)
    return tables


def _group_figures(records: list[CellRecord], benchmark: str, scope: str, entries: list[str],
                   measures: list[dict]) -> dict[tuple[str, str], GroupFigure]:
    lasts = [r.deltas[benchmark]["comparisons"][-1] for r in records]
    pooled = pooled_pvalues(records, benchmark, scope, measures)
    figures = {}
    for m in measures:
        name = m["name"]
        raw = {}
        for entry in entries:
            found = [c[OVERALL] if entry == OVERALL else c.get(scope, {}).get(entry) for c in lasts]
            if any(f is None for f in found):
                continue
            figure = OverSeeds.of([f[f"{name}_before"] for f in found], [f[f"{name}_after"] for f in found],
                                  [f.get(f"ci_{name}") for f in found])
            if figure is not None:
                raw[entry] = (figure, pooled.get((entry, name)))
        groups = [e for e in raw if e != OVERALL]
        adjusted = dict(zip(groups, adjust_pvalues([np.nan if raw[e][1] is None else raw[e][1] for e in groups],
                                                   "holm"), strict=True))
        for entry, (figure, p) in raw.items():
            p_adj = p if entry == OVERALL else (None if np.isnan(adjusted[entry]) else float(adjusted[entry]))
            figures[(entry, name)] = GroupFigure(figure, p, p_adj)
    return figures


def pooled_pvalues(records: list[CellRecord], benchmark: str, scope: str, measures: list[dict]) -> dict:
    """(entry, measure) -> p of the pooled paired test: per item, the mean over seeds after
    against the shared base (module docstring)."""
    base_keys = {read_json_file(r.cell.folder / "base" / benchmark / SUMMARY_FILE, "base summary")["meta"]["run_key"]
                 for r in records}
    if len(base_keys) > 1:
        raise QueerbiasError(f"{benchmark}: the seeds of {records[0].cell.model}/{records[0].cell.run} were compared "
                             "with different base evaluations; a study pools its seeds against one shared base")
    base = load_run(records[0].cell.folder / "base" / benchmark, "base")
    suite = base.suite
    soft_test = soft_test_of(records[0].deltas[benchmark]["meta"].get("soft_test", "wilcoxon"))
    per_seed = []
    for record in records:
        step = record.deltas[benchmark]["comparisons"][-1]["after"]["step"]
        after = load_run(record.cell.folder / f"checkpoint-{step}" / benchmark, record.cell.name)
        aligned = align_rows(base.rows(), after.rows(), suite.key_columns, suite.text_columns,
                             ("base", record.cell.name))
        per_seed.append({(OVERALL if e.scope == OVERALL else e.name): e.values
                         for e in suite.paired_cells(*aligned, base.settings) if e.scope in (OVERALL, scope)})
    kinds = {m["name"]: m["kind"] for m in measures}
    result = {}
    for entry, values in per_seed[0].items():
        for name, kind in kinds.items():
            if kind not in (BINARY, CONTINUOUS) or name not in values:
                continue
            before = np.asarray(values[name][0], dtype=float)
            after = np.mean([np.asarray(seed[entry][name][1], dtype=float) for seed in per_seed], axis=0)
            result[(entry, name)] = (sign_test(after - before) if kind == BINARY
                                     else soft_test(after, before).p)
    return result


# -- base tables (the seed study's Tables 4 and 5) ---------------------------------------------

@dataclass(frozen=True)
class Level:
    """One measure of one entry of a base model: its level (binary measures in %), its standard error
    (None for a single item or a statistic measure) and the items it counts."""

    value: float
    se: float | None
    n: int


@dataclass
class BaseTable:
    """The base models on one benchmark and scope: entries (rows, Overall last) × models, per measure."""

    benchmark: str
    suite: str
    scope: str
    entries: list[str]
    measures: list[dict]
    #: model -> (entry, measure name) -> level; a model whose base is not scored yet: `missing`
    levels: dict[str, dict[tuple[str, str], Level]]
    missing: list[str]


def base_tables(state: StudyState, benchmark: str) -> list[BaseTable]:
    """One table per scope of the benchmark's suite, from each model's shared base evaluation
    (`STUDY/base/<model>/<benchmark>`, `train.shared_base`): what the base models score before any
    training, with standard errors, as the seed study's Tables 4 and 5 give them."""
    found: dict[str, list] = {}
    missing, suite = [], None
    for model in state.study.models:
        folder = state.root / BASE_DIR / model / benchmark
        if not (folder / SUMMARY_FILE).is_file():
            missing.append(model)
            continue
        base = load_run(folder, model)
        suite = base.suite
        found[model] = list(suite.paired_cells(base.rows(), base.rows(), base.settings))
    if suite is None:
        return []
    measures = [{"name": m.name, "label": m.label, "kind": m.kind, "digits": m.digits, "unit": m.unit}
                for m in suite.measures if m.kind in (BINARY, CONTINUOUS)]
    scopes = list(dict.fromkeys(e.scope for cells in found.values() for e in cells if e.scope != OVERALL))
    tables = []
    for scope in scopes:
        entries = list(dict.fromkeys(e.name for cells in found.values() for e in cells if e.scope == scope))
        levels = {model: {(OVERALL if e.scope == OVERALL else e.name, m["name"]): _level(e.values[m["name"]][0],
                                                                                          m["kind"])
                          for e in cells if e.scope in (scope, OVERALL) for m in measures if m["name"] in e.values}
                  for model, cells in found.items()}
        tables.append(BaseTable(benchmark, suite.name, scope, entries + [OVERALL], measures, levels, missing))
    return tables


def _level(values, kind: str) -> Level:
    """A base entry's figure as the pair benchmark's summary gives it (`suites.pairs.aggregate.summarise`):
    binary measures in % with the binomial standard error 100·sqrt(p(1 - p)/n), continuous ones as
    the mean with the standard error of the mean (ddof 1)."""
    items = np.asarray(values, dtype=float)
    n = len(items)
    if kind == BINARY:
        share = float(items.mean())
        return Level(100.0 * share, 100.0 * math.sqrt(share * (1.0 - share) / n), n)
    return Level(float(items.mean()), float(items.std(ddof=1) / math.sqrt(n)) if n > 1 else None, n)


# -- the method table -----------------------------------------------------------------------

@dataclass(frozen=True)
class Column:
    benchmark: str
    figure: str  # a comparison-level figure (e.g. distance), or "overall"
    measure: str  # a measure of the figure, or the key of a list of names in it (`names`)
    title: str
    digits: int = 3
    #: the figure's entry holds a list of names here (e.g. the groups that crossed 50), not a number
    names: bool = False
    #: what the study judges by it (`Judged.roles`: headline, detail, excess, guard, floor, harm), from its suite's
    #: declaration
    roles: frozenset[str] = frozenset()
    #: its title in the summary table ("<benchmark>: <the declared title>"; default: `title`)
    short: str = ""
    #: the benchmark's suite, whose declaration words what the study says about the column (`Judged.wording`)
    suite: str = field(kw_only=True)


@dataclass
class MethodRow:
    run: str
    model: str
    #: a number over seeds, or for a `names` column each name with the number of seeds naming it
    figures: dict[Column, OverSeeds | dict[str, int] | None]
    perplexity: OverSeeds | None
    general_perplexity: OverSeeds | None
    minutes: float | None
    steps: list[int]
    missing: list[str]
    seeds: int = 0


def method_columns(state: StudyState) -> list[Column]:
    """Per benchmark: its overall measures where its suite declares no comparison-level figures
    (`Declaration.figures`; pairs declares the distance to indifference, as its overall score
    averages groups pulled in opposite directions into 50) and its declared guard measure, then
    every comparison-level figure read by its shape: each measure m with `m_before`, `m_after`,
    `delta_m` and `ci_m`, and each list of names beside them (the groups that crossed 50, say).
    Each column carries the roles its suite's `Judged` declaration gives it."""
    columns = []
    for benchmark in state.benchmarks:
        documents = [r.deltas[benchmark] for r in state.records if benchmark in r.deltas]
        if not documents:
            continue
        document = documents[0]
        last = document["comparisons"][-1]
        digits = {m["name"]: m.get("digits", 2) for m in document["measures"]}
        labels = {m["name"]: m["label"] for m in document["measures"]}
        declared = get_declaration(document["suite"])
        titles, judged = declared.figures, declared.judged

        def column(figure: str, measure: str, title: str, places: int) -> Column:
            roles = judged.roles(figure, measure, set(last))
            short = next((f"{benchmark}: {t}" for t in roles.values() if t), "")
            return Column(benchmark, figure, measure, title, places, roles=frozenset(roles), short=short,
                          suite=declared.name)

        guarded = judged.guard.measure if judged.guard is not None and judged.guard.part == OVERALL else None
        columns += [column(OVERALL, m, f"{benchmark}: overall {labels[m]}", digits[m])
                    for m in digits if f"delta_{m}" in last[OVERALL] and (not titles or m == guarded)]
        for key, value in last.items():
            names = [name for name, item in value.items() if isinstance(item, list)
                     and all(isinstance(v, str) for v in item)] if isinstance(value, dict) else []
            if key in ("before", "after", OVERALL, *document["scopes"]) or not (figure_measures(value) or names):
                continue
            title = titles.get(key, key.replace("_", " ")).lower()
            columns += [column(key, m, f"{benchmark}: {title} ({m})", digits.get(m, 3)) for m in figure_measures(value)]
            columns += [replace(column(key, name, f"{benchmark}: {title} ({name})", 3), names=True) for name in names]
    return columns


def figure_measures(value) -> list[str]:
    """The measures of a comparison-level figure: every m with m_before, m_after, delta_m and ci_m."""
    if not isinstance(value, dict):
        return []
    names = [key.removesuffix("_before") for key in value if key.endswith("_before")]
    return [m for m in names if {f"{m}_after", f"delta_{m}", f"ci_{m}"} <= set(value)]


def method_rows(state: StudyState, columns: list[Column]) -> list[MethodRow]:
    rows = []
    for run, model in state.pairs():
        records, missing = state.seeds_of(run, model)
        finished = not missing
        figures = {}
        for column in columns:
            entries = [(r.deltas.get(column.benchmark) or {}).get("comparisons", [{}])[-1].get(column.figure)
                       for r in records] if finished else []
            if not entries or not all(entries):
                figures[column] = None
            elif column.names:
                figures[column] = dict(Counter(name for e in entries for name in e.get(column.measure) or ()))
            else:
                m = column.measure
                figures[column] = OverSeeds.of([e.get(f"{m}_before") for e in entries],
                                               [e.get(f"{m}_after") for e in entries],
                                               [e.get(f"ci_{m}") for e in entries], [e.get(f"p_{m}") for e in entries])
        rows.append(MethodRow(run, model, figures,
                              _metric(records, "perplexity") if finished else None,
                              _metric(records, "general_perplexity") if finished else None,
                              _minutes(records) if finished else None,
                              sorted({r.metrics[-1]["step"] for r in records if r.metrics}),
                              missing + [f"{name} ({column.benchmark})" for column in columns
                                         for name in state.unevaluated(column.benchmark)
                                         if name.startswith(f"{model}/{run}/")], len(records)))
    return rows


def _metric(records: list[CellRecord], key: str) -> OverSeeds | None:
    if not all(r.metrics for r in records):
        return None
    return OverSeeds.of([r.metrics[0].get(key) for r in records], [r.metrics[-1].get(key) for r in records])


def _minutes(records: list[CellRecord]) -> float | None:
    seconds = [r.seconds for r in records]
    return None if any(s is None for s in seconds) else statistics.fmean(seconds) / 60


# -- provenance -----------------------------------------------------------------------------

def provenance(record: CellRecord) -> dict:
    """Commit, versions, model fingerprint and data checksums of one cell, from its own files."""
    info = {"cell": record.cell.name, "status": record.status, "last_line": record.last_line,
            "commits": sorted({str(launch["commit"]) for launch in record.launches if launch.get("commit")}),
            "launches": len(record.launches), "interrupted": record.interrupted, "seconds": record.seconds,
            "benchmarks": {}}
    for benchmark in record.cell.benchmarks:
        base = record.cell.folder / "base" / benchmark / SUMMARY_FILE
        if not base.is_file():
            continue
        meta = read_json_file(base, "base summary")["meta"]
        info["fingerprint"] = meta["model"].get("fingerprint")
        info["benchmarks"][benchmark] = {"data": meta["data"].get("name"), "checksum": meta["data"].get("checksum"),
                                         "n_items": meta["data"].get("n_items")}
        step = record.deltas.get(benchmark, {}).get("comparisons", [{}])[-1].get("after", {}).get("step")
        final = record.cell.folder / f"checkpoint-{step}" / benchmark / SUMMARY_FILE
        info["versions"] = read_json_file(final, "checkpoint summary")["meta"].get("versions") if final.is_file() \
            else meta.get("versions")
    return info
