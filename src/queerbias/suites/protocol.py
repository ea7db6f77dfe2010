"""What a suite declares so that one store runs it, one comparator compares it and a study judges it.

A suite is a benchmark (the pair benchmark, GRUFF, Lou, GIFI-DE, ...) in two parts, as
objectives are. Its `Declaration` is light (no numeric stack): name, typed `Settings`,
item columns, measures, criteria, the figures a study judges (`Judged`) and flags; the
CLI builds its flags, a training or study config is checked and a study's tables are
headed from it. Its `Suite`, the implementation, is loaded on use (`Declaration.
implementation`): how to load its items, score a chunk of items into rows, aggregate
rows into a summary, which paired cells a before/after comparison tests, and how to
present a summary. Everything around that (resume, sharding, provenance, the summary
written last, loading runs back, paired statistics, delta tables and plots) lives once in
`suites.store` and `comparison.compare`, so adding a suite is one folder plus one
registry entry (docs/new-suite.md). What only some suites need in a training run or on a
model card are companion objects (`suites.companions`) that the declaration names.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
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
    #: what a value above `reference` leans to ("the stereotype"), so that the levels and forest plots can
    #: mark an entry that crossed it towards that, or fell through it (an overshoot, not a gain); "": not said
    above_reference: str = ""


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
    #: callable(summary.json) -> bool, where given: whether a run's summary holds what `reads` is computed from,
    #: so that a training run is refused once its base is scored, not after its last step
    available: Any = None


@dataclass(frozen=True)
class Figure:
    """One figure of a comparison: `part` is OVERALL or a comparison-level figure (a key of
    `Declaration.figures`, which `Suite.extras` computes), `measure` one of its measures; `title`
    is how the study's summary table heads it (default: "<part> (<measure>)")."""

    part: str
    measure: str
    title: str = ""


@dataclass(frozen=True)
class Judged:
    """The figures a study judges on a benchmark of this suite (`study.judging`, the method tables).

    headline: the figure whose lowest value after training chooses among the runs that pass and
    lowered it (the pair benchmark's distance to indifference; lower is better, and a run that did
    not lower it is never chosen); `judge.headline` names a benchmark of a suite that has one, and
    the summary table shows it for every such benchmark. details: the headline benchmark's further
    columns in that table, figures where lower is better too (axes say so). excess: a figure whose
    rise fails a run (the stereotype excess), unless the benchmark is named a control set, which
    `control` allows. guard: the figure `judge.guards` reads: a run fails where it fell by more
    than the allowance (the knowledge set's accuracy; higher is better). floor: the headline figure above its noise floor, shown beside the
    headline in the study's summary table with the floor (pairs: the binary distance above its
    coin-flip expectation, `suites.pairs.floor`). harm: lists of names (`measure`: the key of a list of groups in
    the comparison-level figure `part`) shown as each benchmark's harm in the study's summary table;
    the first fails a run on a `judge.harm` benchmark (the validation frames) when any seed names a
    group (the pair benchmark: the groups a frame-level test finds shifted towards the stereotype; those
    that crossed 50 are shown, never judged). The headline and the excess may be a tuple of figures in order
    of preference: a benchmark's comparison is judged by the first whose part it holds (the pair benchmark:
    the association where its set has neutral predicates, else the paper's figures).
    wording: the study's words for these figures, by role: "headline" names the headline figure in the caption
    of the study's first figure, "floor" and "harm" explain their columns under its summary table.
    A suite without a declaration takes no part in judging.
    """

    headline: Figure | tuple[Figure, ...] | None = None
    details: tuple[Figure, ...] = ()
    excess: Figure | tuple[Figure, ...] | None = None
    guard: Figure | None = None
    floor: Figure | None = None
    harm: tuple[Figure, ...] = ()
    control: bool = False
    wording: dict[str, str] = field(default_factory=dict)

    def declared(self) -> tuple[Figure, ...]:
        """Every figure it declares, each alternative of a preference included."""
        preferred = [f for choice in (self.headline, self.excess)
                     for f in (choice if isinstance(choice, tuple) else (choice,))]
        return tuple(f for f in (*preferred, *self.details, self.guard, self.floor, *self.harm) if f is not None)

    def roles(self, part: str, measure: str, parts=None) -> dict[str, str]:
        """The roles ("headline", "detail", "excess", "guard", "floor", "harm", and "judged_harm" for the first harm
        figure, the one that fails a run) the figure `part` (`measure`) plays,
        each with the title the declaration gives it there; `parts`: the parts the benchmark's comparison holds,
        which settle a preference (None: the first figure of each)."""
        declared = [("headline", self.chosen(self.headline, parts)), *(("detail", d) for d in self.details),
                    ("excess", self.chosen(self.excess, parts)), ("guard", self.guard), ("floor", self.floor),
                    *(("harm", h) for h in self.harm), ("judged_harm", self.harm[0] if self.harm else None)]
        return {role: figure.title for role, figure in declared
                if figure is not None and (figure.part, figure.measure) == (part, measure)}

    @staticmethod
    def chosen(figures: Figure | tuple[Figure, ...] | None, parts=None) -> Figure | None:
        """The figure a preference settles on: the first whose part is among `parts` (None: the first)."""
        if figures is None or isinstance(figures, Figure):
            return figures
        return next((f for f in figures if parts is None or f.part in parts), None)


class Declaration:
    """What a suite is, without the numeric stack: read to build flags, check configs and head tables."""

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
    #: the comparison-level parts `Suite.extras` adds to every comparison (keys of a comparison in delta.json
    #: beside its scopes), and those it adds where the data allow them: one list, which the code that fills them
    #: and every figure of `figures` and `judged` name. The comparator refuses a comparison that lacks a part or
    #: a judged figure (`comparison.compare.check_declared`), so a renamed part cannot silently drop a rule.
    parts: ClassVar[tuple[str, ...]] = ()
    optional_parts: ClassVar[tuple[str, ...]] = ()
    #: comparison-level figures among the extras, shaped like an entry (m_before, delta_m, ci_m,
    #: p_m per measure), by title: shown under Overall in delta tables and in trajectories
    figures: ClassVar[dict[str, str]] = {}
    #: what a study judges on a benchmark of this suite
    judged: ClassVar[Judged] = Judged()
    #: compatibility checks besides the data checksum and the "items" settings: (what, path in meta)
    compatible: ClassVar[tuple[tuple[str, tuple[str, ...]], ...]] = ()
    #: the store loads the model in two steps, so that `screen` sees its tokenizer before the weights
    screens: ClassVar[bool] = False
    #: why this suite cannot be a training benchmark ("" = it can)
    no_training_reason: ClassVar[str] = ""
    #: why a model cannot have trained on this suite's items, where `Suite.texts` names none (the
    #: overlap guard then records this instead of a count)
    no_texts_reason: ClassVar[str] = ""
    #: "module:Class" of the implementation (a `Suite` subclass of this declaration); None: this class
    #: is the suite itself (a suite in one file, as a plugin may be)
    implementation: ClassVar[str | None] = None
    #: companion hooks by kind ("training", "card", "report": `suites.companions`), as "module:Class";
    #: a kind not named gets the defaults
    companions: ClassVar[dict[str, str]] = {}
    #: modules whose `register(subparsers)` add the suite's own CLI commands: a suite of another package (the
    #: built-in suites' aliases and exports are modules of `queerbias.commands`, on top of the suites)
    commands: ClassVar[tuple[str, ...]] = ()


    def with_scorer_batch(self, settings, sequences: int | str):
        """`settings` as a training run evaluates this suite at a checkpoint: with `eval.sequences_per_batch` as the
        scorer's batch size where the suite's own changes nothing but speed (default: unchanged)."""
        return settings


class Suite(Declaration, ABC):
    """One benchmark's implementation. Subclasses of a declaration implement the methods."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not inspect.isabstract(cls) and cls.texts is Suite.texts and not cls.no_texts_reason:
            raise TypeError(f"suite {cls.__name__} must name the texts a training corpus may not contain "
                            "(`texts`) or say why it has none (`no_texts_reason`)")

    # -- running --------------------------------------------------------------------

    def load_model(self, spec: str, **options):
        """The model this suite evaluates (a language model unless a suite says otherwise)."""
        from queerbias.models import load_model  # torch: declarations stay light

        return load_model(spec, **options)

    def screen(self, lm, items: Sequence, data: DataRef, settings) -> tuple[Sequence, DataRef]:
        """Refuse, or leave out, items the model cannot evaluate meaningfully (too long for it, say),
        before its weights load: `lm` has `tokenizer`, `kind` and `max_length` (`screens` suites get
        what `models.inspect_model` found). Default: every item is kept."""
        return items, data

    @abstractmethod
    def load_data(self, spec: str | None, settings) -> tuple[Sequence, DataRef]:
        """The (sampled) items to evaluate and what they are; `spec` None: the default data."""

    def texts(self, items: Sequence) -> Iterable[str]:
        """The texts of these items that a model must not have trained on: a training run refuses
        training pairs or a corpus that contain one (`train.overlap`). A suite either names them or
        says why it has none (`no_texts_reason`)."""
        return ()

    def chunk_size(self, settings) -> int:
        """Items per chunk: the unit of progress saving, resuming and sharding."""
        return 64

    #: whether the store may even out the chunks (an even number of them, sizes within one: two
    #: processes get equal shares); False where a chunk's exact composition is part of the method
    even_chunks: bool = True

    def chunk_rows(self, chunk: Sequence, settings) -> int:
        """How many rows `evaluate` yields for `chunk` (one per item); a saved chunk holding
        another number is not this chunk's result (`integrity.usable_chunk`)."""
        return len(chunk)

    def row_items(self, chunk: Sequence) -> list[dict] | None:
        """What each row `evaluate` yields for `chunk` carries of its item (its key and texts), in
        order: a saved chunk whose rows name other items is no result of this chunk
        (`integrity.usable_chunk`). None (the default): not checked."""
        return None

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
