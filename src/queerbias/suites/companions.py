"""Companion hooks: what only some suites add in a training run, on a model card or to `queerbias report`.

The `Suite` protocol holds what every suite implements. What a suite may add beyond it
lives in companion objects that its declaration names (`Declaration.companions`: kind ->
"module:Class") and `suites.registry.companion` finds; a kind a suite does not name gets
the class here, whose defaults serve any suite. The pair suite owns the companions that
hold its historical folder name, its held-out default data, its card's table and
closing lines (`suites.pairs.training`, `suites.pairs.card`, `suites.pairs.paper_tables`).

Light: training configs and cards read them before any model loads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from queerbias.suites.protocol import OVERALL, Declaration, Figure


@dataclass(frozen=True)
class IndexMetric:
    """One `model-index` metric of a training run's model card: its type (`_base` is appended for
    the base model's value) and label, and where a comparison holds it: `part` is "overall" or a
    comparison-level figure (`Declaration.figures`), `measure` the measure whose before/after it reports."""

    type: str
    label: str
    part: str
    measure: str


class TrainingHooks:
    """How a benchmark of the suite behaves in a training run (`train.benchmarks`)."""

    #: the output folder of the first benchmark of this suite in a training run, where the suite
    #: keeps a historical name; None: named after its data
    folder_name: ClassVar[str | None] = None

    def data(self, suite: Declaration, spec: str | None, held_out: bool) -> str | None:
        """The data a training benchmark evaluates when its config names `spec` (None: none);
        `held_out`: the objective is judged on data it did not train on (mitigation objectives)."""
        return spec

    def available_offline(self, suite: Declaration, spec: str | None) -> bool:
        """Whether the data can be had without a download (an `optional` benchmark is skipped if not)."""
        return True

    def default_benchmarks(self, held_out: bool) -> list[dict]:
        """The `eval.benchmarks` entries (without `suite`) a training run without any evaluates, when
        this is the registry's default suite; `held_out`: the objective is judged on data it did not
        train on. Default: one entry, the suite's default data."""
        return [{}]

    def guard_refusal(self, suite: Declaration, comparison: dict, allowed: float) -> str | None:
        """Why a checkpoint may be chosen as best on no benchmark of its run when a benchmark of this
        suite guards the run (`guard: allowed`; `comparison`: the base against that checkpoint; None:
        it may). Default: the declared guard figure (`judged.guard`; without one, the first measure
        overall) fell more than `allowed` in its measure's unit."""
        figure = suite.judged.guard or Figure(OVERALL, suite.measures[0].name)
        entry = comparison.get(figure.part) or {}
        delta = entry.get(f"delta_{figure.measure}")
        if delta is None or delta >= -allowed:
            return None
        measure = next((m for m in suite.measures if m.name == figure.measure), None)
        label = figure.title or (measure.label if measure else figure.measure)
        unit = f" {measure.unit}" if measure is not None and measure.unit else ""
        return f"{label} fell {-delta:.1f}{unit} > {allowed:g}"


class CardHooks:
    """What a training run's closing lines and model card say of a benchmark of the suite (`train.card`)."""

    #: the task `model-index` names (default: the suite's description)
    index_task: ClassVar[str] = ""

    def index_metrics(self, suite: Declaration) -> tuple[IndexMetric, ...]:
        """What `model-index` reports of a benchmark of this suite: every measure overall, then each
        measure of the judged headline figure (`Declaration.judged`) where it is a comparison-level one."""
        overall = tuple(IndexMetric(m.name, m.label, OVERALL, m.name) for m in suite.measures)
        headline = suite.judged.chosen(suite.judged.headline)
        if headline is None or headline.part == OVERALL:
            return overall
        title = suite.figures.get(headline.part, headline.part)
        return overall + tuple(IndexMetric(f"{headline.part}_{m.name}", f"{title} of the {m.label}", headline.part,
                                           m.name) for m in suite.measures)

    def closing_figures(self, comparison: dict, measures: list[dict]) -> tuple[str, dict, list[tuple[str, str, int]]]:
        """What a training run's closing line says of a comparison (the last checkpoint against the
        base): a title ("" or e.g. "distance to indifference "), the entry of the comparison holding the
        figures, and (measure, label, digits) of each. Default: the overall change of every measure."""
        overall = comparison[OVERALL]
        return "", overall, [(m["name"], m["label"], m.get("digits", 2)) for m in measures
                             if f"delta_{m['name']}" in overall]

    def closing_clauses(self, comparison: dict) -> str:
        """What the closing line adds after the figures ("; ..." clauses; "" for none)."""
        return ""

    def closing_lines(self, documents: Mapping[str, dict]) -> list[str]:
        """Lines a training run's close and its card add across all its benchmarks' delta documents
        (by benchmark name), once per suite among them."""
        return []

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
        every benchmark of this suite in the run. Default: none."""
        return []


class ReportHooks:
    """`queerbias report`: several runs (`RunRecord`s) of the suite side by side."""

    def tables(self, runs: list) -> dict[str, str] | None:
        """"md", "csv" and "tex" text; None: the default, the headline figure per group, groups as rows,
        runs as columns (`report.score_tables`)."""
        return None

    def plot(self, runs: list, path: Path) -> Path | None:
        """The figure of the runs drawn at `path`; None: the default, bars of the headline figure per
        group and run."""
        return None


#: the defaults of each kind of companion
DEFAULTS: dict[str, type] = {"training": TrainingHooks, "card": CardHooks, "report": ReportHooks}
