"""Several runs of one suite side by side: the headline figure per group, as tables and bars.

What `queerbias report` shows for a suite without a report of its own (its report companion,
`suites.companions.ReportHooks`; the pair suite has the paper's tables, `suites.pairs.paper_tables`).
"""

from __future__ import annotations

from pathlib import Path

from queerbias.report.plots import hbar_panels
from queerbias.report.tables import Table, fmt, to_csv, to_latex, to_markdown

OVERALL = "Overall"


def _rows(headlines: list[tuple[str, object]]) -> tuple[list[str], dict[str, dict]]:
    """Group names in order of appearance, and each run's figure per group and Overall."""
    groups = list(dict.fromkeys(group for _, h in headlines for group in h.groups))
    return groups, {label: {**h.groups, OVERALL: h.overall} for label, h in headlines}


def render_headline_tables(headlines: list[tuple[str, object]]) -> dict[str, str]:
    """The headline figure per group of several runs of one suite (groups as rows, runs as columns)."""
    labels = [label for label, _ in headlines]
    name = headlines[0][1].label
    groups, values = _rows(headlines)
    table = Table(
        header=["", *labels],
        rows=[[group, *[fmt(values[label].get(group)) for label in labels]] for group in groups],
        summary_rows=[[OVERALL, *[fmt(values[label][OVERALL]) for label in labels]]],
        caption=f"{name} per group",
    )
    csv_rows = [[group, label, values[label].get(group)] for group in [*groups, OVERALL] for label in labels]
    return {"md": to_markdown(table), "csv": to_csv(["group", "run", name.replace(" ", "_")], csv_rows),
            "tex": to_latex(table)}


def headline_plot(headlines: list[tuple[str, object]], path: Path) -> Path:
    """Bars of the headline figure per group (and Overall), one colour per run."""
    name = headlines[0][1].label
    groups, values = _rows(headlines)
    series = [(label, {group: {name: value} for group, value in by_group.items()}) for label, by_group in values.items()]
    return hbar_panels([*groups, OVERALL], series, [(name, name, None)], f"{name} per group", path)
