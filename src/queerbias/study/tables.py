"""The study's tables: per benchmark the seed study's shape (Tables 6 and 7: identity groups ×
models, before → after), and the method table; as `report.tables.Table` for Markdown,
LaTeX and HTML, and as long CSV with every number at full precision.

A figure over seeds reads `before → after (Δ change, spread; CI [low, high])` with the
significance marker as superscript (aggregate's docstring says how each part is made);
a model and run lacking seeds reads `missing: CELLS` instead, never a number.
"""

from __future__ import annotations

import statistics

from queerbias.report.formatting import star_legend
from queerbias.report.tables import Cell, Table, fmt, to_csv
from queerbias.study.aggregate import Column, GroupTable, MethodRow, OverSeeds, StudyState
from queerbias.study.judging import JudgeSettings, Verdict, guard_column, headline_column
from queerbias.suites.protocol import OVERALL
from queerbias.suites.registry import get_declaration

SPREAD = ("spread: the change's min to max over 2 seeds, its SD over 3 or more; CI: the mean of the seeds' "
          "95% bootstrap intervals of the change")


def change_text(figure: OverSeeds | None, digits: int = 2) -> str:
    if figure is None:
        return "–"
    parts = [f"Δ {fmt(figure.delta, digits, signed=True)}"]
    spread = figure.spread
    if spread and spread[0] == "range":
        parts[0] += f", seeds {fmt(spread[1], digits, signed=True)} to {fmt(spread[2], digits, signed=True)}"
    elif spread:
        parts[0] += f" ± {fmt(spread[1], digits)} SD"
    if figure.ci is not None:
        parts.append(f"CI [{fmt(figure.ci[0], digits, signed=True)}, {fmt(figure.ci[1], digits, signed=True)}]")
    return f"{fmt(figure.before, digits)} → {fmt(figure.after, digits)} ({'; '.join(parts)})"


def missing_text(cells: list[str]) -> str:
    return "missing: " + ", ".join(cells)


def group_table(table: GroupTable, run: str, measure: dict, models: list[str]) -> Table:
    suite = get_declaration(table.suite)
    title = suite.scope_titles.get(table.scope, table.scope)
    rows = []
    for entry in table.entries:
        row = ["Overall" if entry == OVERALL else entry]
        for model in models:
            if (run, model) in table.missing:
                row.append(missing_text(table.missing[(run, model)]))
                continue
            figure = table.figures.get((run, model), {}).get((entry, measure["name"]))
            row.append(Cell(change_text(figure.figure, measure.get("digits", 2)), marks=figure.marker)
                       if figure else "–")
        rows.append(row)
    unit = " (percentage points)" if measure.get("unit") == "pp" else ""
    return Table(header=[title, *models], rows=rows[:-1], summary_rows=rows[-1:],
                 caption=f"{table.benchmark}, run {run}: {measure['label']}{unit}, base → final checkpoint, "
                         "mean over seeds",
                 notes=f"{SPREAD}. Marker: Holm-adjusted p of the pooled paired test ({star_legend()}), shown "
                       "when every seed changed in the same direction (docs/study.md).")


def group_csv(tables: list[GroupTable], runs: list[str], models: list[str]) -> str:
    header = ["benchmark", "scope", "run", "model", "entry", "measure", "seeds", "before", "after", "delta",
              "spread", "spread_low", "spread_high", "ci_low", "ci_high", "p_pooled", "p_holm", "seeds_agree",
              "marker", "missing"]
    rows = []
    for table in tables:
        for run in runs:
            for model in models:
                for measure in table.measures:
                    for entry in table.entries:
                        base = [table.benchmark, table.scope, run, model, entry, measure["name"]]
                        if (run, model) in table.missing:
                            rows.append(base + [None] * 13 + [" ".join(table.missing[(run, model)])])
                            continue
                        found = table.figures.get((run, model), {}).get((entry, measure["name"]))
                        if found is None:
                            continue
                        f = found.figure
                        spread = f.spread or (None, None, None)
                        ci = f.ci or (None, None)
                        rows.append(base + [f.seeds, f.before, f.after, f.delta, *spread, *ci, found.p_pooled,
                                            found.p_adjusted, f.agree, found.marker, ""])
    return to_csv(header, rows)


def method_table(rows: list[MethodRow], columns: list[Column], found: dict[tuple[str, str], Verdict],
                 choice: str) -> Table:
    """One row per run and model, its verdict last; a list-of-names column (the groups that crossed
    50) shows each name with the number of seeds that named it."""
    body = []
    for row in rows:
        steps = "/".join(map(str, row.steps)) or "?"
        cells = [f"{row.run} ({steps} steps)", row.model]
        if row.missing and all(row.figures[c] is None for c in columns):
            cells += [missing_text(row.missing)] * (len(columns) + 4)
        else:
            for column in columns:
                figure = row.figures[column]
                if figure is None:
                    cells.append(missing_text(row.missing) if row.missing else "–")
                elif column.names:
                    cells.append(names_text(figure, row.seeds))
                else:
                    cells.append(Cell(change_text(figure, column.digits),
                                      marks="*" if figure.every_seed_significant() else ""))
            cells += [_perplexity(row.general_perplexity), _perplexity(row.perplexity),
                      "–" if row.minutes is None else f"{row.minutes:.1f} min", found[(row.run, row.model)].text]
        body.append(cells)
    return Table(header=["run", "model", *(c.title for c in columns), "general perplexity", "in-domain perplexity",
                         "time per cell", "verdict"], rows=body,
                 caption="Method table: base → final checkpoint, mean over seeds",
                 notes=f"{SPREAD}. * every seed's own test p < .05, all in the same direction. Perplexity: "
                       "the shipped neutral German text (general) and the corpus's validation split (in-domain), "
                       "with the mean change in percent. Time: the mean wall time of a cell (its launches "
                       "summed); the first cell of a model also scored the shared base. " + choice)


def summary_table(rows: list[MethodRow], columns: list[Column], found: dict[tuple[str, str], Verdict],
                  judge: JudgeSettings) -> Table:
    """The method table narrowed to what judges a run, as the suites declare it (`Judged`): every
    benchmark's headline figure (pairs: the binary distance), the headline benchmark's details (pairs:
    soft distance, pair-level |d| and stereotype excess), each guard's figure, general perplexity and
    the verdict, each cell `before → after (relative change, SD over seeds)`; the full table holds the
    rest."""
    headline = headline_column(columns, judge.headline)
    chosen = [c for c in columns if "headline" in c.roles]
    if headline is not None:
        chosen += [c for c in columns if c.benchmark == headline.benchmark and not c.names and "detail" in c.roles]
    chosen += [guard_column(columns, name) for name in judge.guards if guard_column(columns, name) is not None]
    body = []
    for row in rows:
        cells = [f"{row.run} ({'/'.join(map(str, row.steps)) or '?'} steps)", row.model]
        for column in chosen:
            figure = row.figures[column]
            cells.append(Cell(relative_text(figure, column.digits, absolute=column.figure == OVERALL),
                              marks="*" if figure is not None and figure.every_seed_significant() else "")
                         if figure is not None else ("missing" if row.missing else "–"))
        verdict = found[(row.run, row.model)]
        cells += [relative_text(row.general_perplexity, 2),
                  missing_text(row.missing) if not verdict.judged and row.missing else verdict.text]
        body.append(cells)
    titles = [c.short or c.title for c in chosen]
    return Table(header=["run", "model", *titles, "general perplexity", "verdict"], rows=body,
                 caption="Method table, summary: base → final checkpoint, mean over seeds",
                 notes="Each cell: before → after (mean change in % of before, or in points for a guard's "
                       "measure; ± its SD over seeds). * every seed's own test p < .05, all in the same direction. "
                       "Verdict: docs/study.md, Judging. The full table (every figure, intervals, crossed and "
                       "harmful groups, time) follows.")


def relative_text(figure: OverSeeds | None, digits: int = 2, absolute: bool = False) -> str:
    """`before → after (±x%, SD y)`: the mean relative change with its SD over seeds (`absolute`:
    the change itself, for measures in points such as accuracy)."""
    if figure is None:
        return "–"
    if absolute or figure.relative is None:
        change, unit = figure.deltas, ""
    else:
        change, unit = tuple(100.0 * (a - b) / b for a, b in zip(figure.afters, figure.befores, strict=True)), "%"
    mean = sum(change) / len(change)
    spread = f", SD {statistics.stdev(change):.1f}" if len(change) >= 3 else ""
    return f"{fmt(figure.before, digits)} → {fmt(figure.after, digits)} ({mean:+.1f}{unit}{spread})"


def names_text(counts: dict[str, int], seeds: int) -> str:
    """Each name with the share of seeds that named it, most often first; "none" for none."""
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{name} ({count}/{seeds} seeds)" for name, count in ordered) or "none"


def _perplexity(figure: OverSeeds | None) -> str:
    if figure is None:
        return "–"
    relative = figure.relative
    text = change_text(figure, 2)
    return text if relative is None else text.replace(" (Δ", f" ({relative:+.1f}%; Δ", 1)


def method_csv(rows: list[MethodRow], columns: list[Column], found: dict[tuple[str, str], Verdict]) -> str:
    header = ["run", "model", "steps", "figure", "seeds", "before", "after", "delta", "relative_pct", "spread",
              "spread_low", "spread_high", "ci_low", "ci_high", "every_seed_significant", "minutes", "names",
              "missing", "verdict"]
    body = []
    for row in rows:
        start = len(body)
        named = [(f"{c.benchmark}:{c.figure}:{c.measure}", row.figures[c], c.names) for c in columns]
        named += [("general_perplexity", row.general_perplexity, False), ("perplexity", row.perplexity, False)]
        for name, figure, names in named:
            base = [row.run, row.model, "/".join(map(str, row.steps)), name]
            if figure is None:
                body.append(base + [None] * 13 + [" ".join(row.missing)])
            elif names:
                body.append(base + [row.seeds] + [None] * 10 + [row.minutes, names_text(figure, row.seeds), ""])
            else:
                spread = figure.spread or (None, None, None)
                ci = figure.ci or (None, None)
                body.append(base + [figure.seeds, figure.before, figure.after, figure.delta, figure.relative, *spread,
                                    *ci, figure.every_seed_significant(), row.minutes, "", ""])
        for line in body[start:]:
            line.append(found[(row.run, row.model)].text)
    return to_csv(header, body)


def status_lines(state: StudyState) -> list[str]:
    """What the report lacks, one line each (empty: the study is complete)."""
    lines = []
    for record in state.missing:
        reason = {"failed": f"failed: {record.last_line}", "not run": "not run yet",
                  "unfinished": "started, not finished (resume: run the study again)"}[record.status]
        lines.append(f"{record.cell.name}: {reason}")
    for benchmark in state.benchmarks:
        for name in state.unevaluated(benchmark):
            lines.append(f"{name}: no comparison for {benchmark}")
    return lines
