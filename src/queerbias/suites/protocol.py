"""What a suite declares so that one store runs it and one comparator compares it.

A suite is a benchmark (the pair benchmark, GRUFF, Lou, GIFI-DE, ...) described by a
class: its typed `Settings`, how to load its items, how to score a chunk of items into
rows (one row per scored item), how to aggregate rows into a summary, which paired
cells a before/after comparison tests, and how to present a summary. Everything around
that (resume, sharding, provenance, the summary written last, loading runs back,
paired statistics, delta tables and plots) lives once in `suites.store` and
`report.compare`, so adding a suite is one folder plus one registry entry
(docs/new-suite.md).

Module imports stay light here and in every suite's `suite.py` (the CLI builds its
parser from the registered suites); methods import the numeric stack when they run.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

BINARY, CONTINUOUS, STATISTIC = "binary", "continuous", "statistic"
OVERALL = "overall"


@dataclass(frozen=True)
class DataRef:
    """What a run was evaluated on; `checksum` must match for two runs to be compared."""

    name: str
    checksum: str
    n_items: int
    source: str = ""
    details: dict = field(default_factory=dict)  # sample, per-file checksums, licence...

    def to_dict(self) -> dict:
        reserved = {"name", "source", "checksum", "n_items"} & set(self.details)
        if reserved:
            raise ValueError(f"data details must not replace {sorted(reserved)}")
        return {"name": self.name, "source": self.source, "checksum": self.checksum,
                "n_items": self.n_items, **self.details}


@dataclass(frozen=True)
class Column:
    """One column of a suite's item rows; the type restores rows read back from files."""

    name: str
    type: type  # str, int, float, bool, or object for nested JSON values
    nullable: bool = False
    #: files written before the column existed lack it: it is then filled with this value
    default: Any = field(default=None, kw_only=True)
    optional: bool = field(default=False, kw_only=True)


@dataclass(frozen=True)
class Measure:
    """A per-item quantity that a comparison tests.

    binary: 0/1 flags, reported in percent, tested with the exact McNemar test;
    continuous: values tested with the Wilcoxon signed-rank (or paired t) test;
    statistic: a figure computed from all items of a cell (e.g. a GIFI dimension),
    whose change gets a paired bootstrap interval and p-value.
    """

    name: str
    kind: str
    label: str  # as tables and plots name it, e.g. "bias score"
    unit: str = ""  # e.g. "pp" for percentage points
    digits: int = 2  # decimals in tables
    reference: float | None = None  # a value with a meaning, drawn in trajectories (50: no preference)
    reference_label: str = ""


@dataclass(frozen=True)
class PairedItems:
    """The items of one table entry (an identity group, a setting, a strategy) in both runs.

    `values[measure] = (before, after)`: per-item arrays of equal length for binary and
    continuous measures, resampled together; for a statistic measure the two figures, and
    `statistics[measure] = (n units, draw)` where `draw(rng)` resamples the units (the same
    for both runs) and returns (before, after) on them.
    """

    scope: str  # OVERALL, or the scope the entry belongs to (e.g. "groups", a task)
    name: str
    values: dict[str, tuple[Any, Any]]
    statistics: dict[str, tuple[int, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Headline:
    """The figures a training metrics line shows for a run: the overall figure, one per group,
    and suite-specific extras (the pair benchmark's distance to indifference)."""

    label: str
    overall: float | None
    groups: dict[str, float | None]
    extras: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"label": self.label, "overall": self.overall, "groups": self.groups, **self.extras}


@dataclass(frozen=True)
class IndexMetric:
    """One `model-index` metric of a training run's model card: its type (`_base` is appended for
    the base model's value) and label, and where a comparison holds it: `part` is "overall" or a
    comparison-level figure (`Suite.figures`), `measure` the measure whose before/after it reports."""

    type: str
    label: str
    part: str
    measure: str


@dataclass(frozen=True)
class Criterion:
    """How to pick the best checkpoint: `order(row)` of a trajectory row, lowest first, from the
    row keys `reads` (every checkpoint must have them); `refuses(comparison)`, where given, names
    why a checkpoint may not be chosen whatever its order (None: it may), so that a criterion can
    weigh a second figure without folding it into one number."""

    description: str
    reads: tuple[str, ...]
    order: Any  # callable(row) -> tuple
    needs: str = ""  # what `reads` is, for the error when a checkpoint lacks it
    refuses: Any = None  # callable(comparison entry) -> str | None


class Suite(ABC):
    """One benchmark. Subclasses set the class attributes and implement the methods."""

    name: ClassVar[str]
    description: ClassVar[str]
    #: frozen dataclass with at least `sample` and `seed`; field metadata: help, choices,
    #: role ("items": changes the items or rows (default), "summary": only the summary,
    #: "execution": neither, e.g. batch size)
    Settings: ClassVar[type]
    data_default: ClassVar[str | None] = None
    data_help: ClassVar[str] = ""
    licence: ClassVar[str] = ""
    #: what the suite calls its items, in card and model-index texts and as the Python API's name of a
    #: run's rows besides `items` (`run.pairs` of a pair run)
    items_name: ClassVar[str] = "items"
    #: the per-item file of a run: .csv or .jsonl
    items_file: ClassVar[str] = "items.csv"
    columns: ClassVar[tuple[Column, ...]]
    #: columns that identify an item across runs, and those that must then agree
    key_columns: ClassVar[tuple[str, ...]]
    text_columns: ClassVar[tuple[str, ...]] = ()
    measures: ClassVar[tuple[Measure, ...]] = ()
    #: the metric keys every summary.json of this suite holds
    summary_keys: ClassVar[tuple[str, ...]] = ()
    #: titles of the scopes in tables ("groups" -> "Identity")
    scope_titles: ClassVar[dict[str, str]] = {}
    #: best-checkpoint criteria by name; the first is the default
    criteria: ClassVar[dict[str, Criterion]] = {}
    #: comparison-level figures among the extras, shaped like an entry (m_before, delta_m, ci_m,
    #: p_m per measure), by title: shown under Overall in delta tables and in trajectories
    figures: ClassVar[dict[str, str]] = {}
    #: compatibility checks besides the data checksum and the "items" settings: (what, path in meta)
    compatible: ClassVar[tuple[tuple[str, tuple[str, ...]], ...]] = ()
    #: the store loads the model in two steps, so that `screen` sees its tokenizer before the weights
    screens: ClassVar[bool] = False

    # -- in training runs -------------------------------------------------------------
    #: why this suite cannot be a training benchmark ("" = it can)
    no_training_reason: ClassVar[str] = ""
    #: the output folder of the first benchmark of this suite in a training run, where the suite
    #: keeps a historical name (pairs: "bias"); None: named after its data (`train.benchmarks`)
    training_name: ClassVar[str | None] = None

    # -- running --------------------------------------------------------------------

    def load_model(self, spec: str, **options):
        """The model this suite evaluates (a language model unless a suite says otherwise)."""
        from queerbias.models import load_model

        return load_model(spec, **options)

    def screen(self, lm, items: Sequence, data: DataRef, settings) -> tuple[Sequence, DataRef]:
        """Refuse, or leave out, items the model cannot evaluate meaningfully (too long for it, say),
        before its weights load: `lm` has `tokenizer`, `kind` and `max_length` (`screens` suites get
        what `models.inspect_model` found). Default: every item is kept."""
        return items, data

    @abstractmethod
    def load_data(self, spec: str | None, settings) -> tuple[Sequence, DataRef]:
        """The (sampled) items to evaluate and what they are; `spec` None: the default data."""

    def training_data(self, spec: str | None, held_out: bool) -> str | None:
        """The data a training benchmark evaluates when its config names `spec` (None: none);
        `held_out`: the objective is judged on data it did not train on (mitigation objectives)."""
        return spec

    def available_offline(self, spec: str | None) -> bool:
        """Whether the data can be had without a download (an `optional` benchmark is skipped if not)."""
        return True

    def texts(self, items: Sequence) -> Iterable[str]:
        """The texts of these items that a model must not have trained on: a training run refuses
        training pairs or a corpus that contain one (`train.overlap`). Default: none, not checked."""
        return ()

    def chunk_size(self, settings) -> int:
        """Items per chunk: the unit of progress saving, resuming and sharding."""
        return 64

    @abstractmethod
    def evaluate(self, lm, chunks: Iterable[Sequence], settings) -> Iterator[list[dict]]:
        """Score chunks of items in order, yielding each chunk's rows (dicts of `columns`)."""

    def run_meta(self, lm, settings) -> dict:
        """The suite's method for this model (scoring configuration, counting rules, components):
        recorded in summary.json's meta and part of the run key."""
        return {}

    @abstractmethod
    def summarise(self, rows, settings) -> dict:
        """Every figure of a run from its rows (a DataFrame); becomes summary.json's metrics."""

    @abstractmethod
    def headline(self, summary: dict) -> Headline:
        """The overall figure and one figure per group."""

    def group_table(self, summary: dict) -> dict[str, dict]:
        """Figures per group in table order, for a run's `groups` frame (default: the headline's)."""
        headline = self.headline(summary)
        return {group: {headline.label: value} for group, value in headline.groups.items()}

    # -- comparing ------------------------------------------------------------------

    def check_rows(self, rows, summary: dict, path: Path) -> None:
        """Refuse rows that disagree with themselves (e.g. decisions not matching scores)."""

    def paired_cells(self, before, after, settings) -> Iterable[PairedItems]:
        """The paired entries of a comparison; `before`/`after` are rows aligned by key, `settings`
        the runs' (compatible) settings."""
        return ()

    def extras(self, before, after, options, settings) -> dict:
        """Figures of a comparison beyond the paired cells, stored at the comparison's top level (a
        correlation of the two runs, the distance to indifference); `options` are the compare options
        (seed, resamples), `settings` the BEFORE run's (the pair benchmark's indifference margin). An
        extra with a `p` is Bonferroni-adjusted across the AFTER runs."""
        return {}

    def extra_tables(self, document: dict) -> list:
        """Tables of the extras for delta.md."""
        return []

    def closing_figures(self, comparison: dict, measures: list[dict]) -> tuple[str, dict, list[tuple[str, str, int]]]:
        """What a training run's closing line says of a comparison (the last checkpoint against the
        base): a title ("" or e.g. "distance to indifference "), the entry of the comparison holding the
        figures, and (measure, label, digits) of each. Default: the overall change of every measure."""
        overall = comparison[OVERALL]
        return "", overall, [(m["name"], m["label"], m.get("digits", 2)) for m in measures
                             if f"delta_{m['name']}" in overall]

    def closing_clauses(self, comparison: dict) -> str:
        """What the closing line adds after the figures ("; ..." clauses; "" for none). Pairs: the
        pair-level |d| change, the stereotype excess and the crossed and harmful groups."""
        return ""

    def closing_lines(self, documents: Mapping[str, dict]) -> list[str]:
        """Lines a training run's close and its card add across all its benchmarks' delta documents
        (by benchmark name), once per suite among them. Pairs: the specificity ratio against the
        knowledge set."""
        return []

    # -- presenting -----------------------------------------------------------------

    @abstractmethod
    def title(self, summary: dict) -> str:
        """The heading of summary.md."""

    @abstractmethod
    def render(self, summary: dict) -> list:
        """The body of summary.md: report.tables.Table objects and paragraphs."""

    def provenance(self, meta: dict) -> list[str]:
        """Suite-specific lines under the summary (method, notes)."""
        return []

    def plot(self, summary: dict, path: Path) -> Path | None:
        """A figure of one run, drawn with `report.plots` (None: none)."""
        return None

    def report_tables(self, runs: list) -> dict[str, str] | None:
        """`queerbias report`: several runs (`RunRecord`s) side by side as "md", "csv" and "tex" text.
        Default (None): the headline figure per group, groups as rows, runs as columns."""
        return None

    def report_plot(self, runs: list, path: Path) -> Path | None:
        """`queerbias report`'s figure of the runs, drawn at `path` (None: the default, bars of the
        headline figure per group and run)."""
        return None

    # -- on a training run's model card ------------------------------------------------
    #: the task `model-index` names (default: the description)
    index_task: ClassVar[str] = ""

    def index_metrics(self) -> tuple[IndexMetric, ...]:
        """What `model-index` reports of a benchmark of this suite. Default: every measure overall."""
        return tuple(IndexMetric(m.name, m.label, OVERALL, m.name) for m in self.measures)

    def card_summary(self, comparison: dict, data: str, evaluated: str) -> str | None:
        """A sentence for the card's summary on the change of the first benchmark that gives one (the
        comparison of the base with the last checkpoint, the data's name, how it relates to the
        training data: "held out: ..."). Default: none."""
        return None

    def card_blocks(self, document: dict, comparison: dict, evaluated: str) -> list[str] | None:
        """The card's Markdown blocks for a benchmark of this suite (`document`: its delta.json).
        Default (None): the overall before/after of each measure (`train.card.body`)."""
        return None

    def card_limitations(self, comparisons: list[dict]) -> list[str]:
        """Lines for the card's limitations, from the comparisons (base against the last checkpoint) of
        every benchmark of this suite in the run (pairs: the group sizes). Default: none."""
        return []
