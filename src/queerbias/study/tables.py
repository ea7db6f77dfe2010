"""The study's tables: per benchmark the seed study's shape (Tables 6 and 7: identity groups ×
models, before → after), and the method table; as `report.tables.Table` for Markdown,
LaTeX and HTML, and as long CSV with every number at full precision.

A figure over seeds reads `before → after (Δ change, spread; CI [low, high])` with the
significance marker as superscript (aggregate's docstring says how each part is made);
a model and run lacking seeds reads `missing: CELLS` instead, never a number.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from queerbias.report.formatting import star_legend
from queerbias.report.tables import Cell, Table, fmt, to_csv
from queerbias.study.aggregate import BaseTable, Column, GroupTable, Level, MethodRow, OverSeeds, StudyState
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
    """The verdict of a run with cells still to run: which ones. Its figure cells say only
    "missing" (the list once per row, not once per column)."""
    return "missing: " + ", ".join(cells)


def group_table(table: GroupTable, run: str, measure: dict, models: list[str]) -> Table:
    suite = get_declaration(table.suite)
    title = suite.scope_titles.get(table.scope, table.scope)
    rows = []
    digits = measure.get("digits", 2)
    for entry in table.entries:
        row = ["Overall" if entry == OVERALL else entry]
        for model in models:
            if (run, model) in table.missing:
                row.append("missing")
                continue
            figure = table.figures.get((run, model), {}).get((entry, measure["name"]))
            row.append(Cell(change_text(figure.figure, digits), marks=figure.marker) if figure else "–")
        mean = mean_over_models(table, run, models, entry, measure["name"])
        row.append("–" if mean is None else f"{fmt(mean[0], digits)} → {fmt(mean[1], digits)} "
                                            f"(Δ {fmt(mean[2], digits, signed=True)})")
        rows.append(row)
    unit = " (percentage points)" if measure.get("unit") == "pp" else ""
    return Table(header=[title, *models, MEAN], rows=rows[:-1], summary_rows=rows[-1:],
                 caption=f"{table.benchmark}, run {run}: {measure['label']}{unit}, base → final checkpoint, "
                         "mean over seeds",
                 notes=f"{SPREAD}. Marker: Holm-adjusted p of the pooled paired test ({star_legend()}), shown "
                       f"when every seed changed in the same direction (docs/study.md). {MEAN_NOTE}")


def mean_over_models(table: GroupTable, run: str, models: list[str], entry: str,
                     measure: str) -> tuple[float, float, float] | None:
    """(before, after, change) of one entry and measure averaged over the models, None unless every model
    has it."""
    found = [table.figures.get((run, model), {}).get((entry, measure)) for model in models]
    if None in found:
        return None
    return tuple(statistics.fmean(getattr(f.figure, part) for f in found) for part in ("before", "after", "delta"))


#: the column over models in the seed study's tables (Tables 4-7), and its name in long CSV (not a model name:
#: study names hold no space)
MEAN, MEAN_ROW = "Mean", "mean over models"
MEAN_NOTE = ("Mean: over the models, as the paper's Mean column; shown where every model has the figure "
             "(never a mean over fewer models).")


def paper_delta_table(table: GroupTable, run: str, models: list[str]) -> Table:
    """The seed study's Tables 6 and 7: per entry and model the change of every measure ("Δ bias / Δ soft")
    with its marker, and the Mean over models."""
    suite = get_declaration(table.suite)
    measures = table.measures
    rows = []
    for entry in table.entries:
        row = ["Overall" if entry == OVERALL else entry]
        found = []
        for model in models:
            figures = table.figures.get((run, model), {})
            cells = [figures.get((entry, m["name"])) for m in measures]
            found.append(cells)
            if (run, model) in table.missing:
                row.append("missing")
            elif any(c is None for c in cells):
                row.append("–")
            else:
                row.append(tuple(Cell(fmt(c.figure.delta, 1, signed=True), marks=c.marker) for c in cells))
        complete = all(c is not None for cells in found for c in cells)
        row.append(tuple(fmt(statistics.fmean(cells[i].figure.delta for cells in found), 1, signed=True)
                         for i in range(len(measures))) if complete else "–")
        rows.append(row)
    labels = " / ".join(f"Δ {m['label']}" for m in measures)
    return Table(header=[suite.scope_titles.get(table.scope, table.scope), *models, MEAN], rows=rows[:-1],
                 summary_rows=rows[-1:],
                 caption=f"{table.benchmark}, run {run}: {labels}, base → final checkpoint, mean over seeds "
                         "(the seed study's Tables 6 and 7)",
                 notes=f"Marker: Holm-adjusted p of the pooled paired test ({star_legend()}), shown when every "
                       f"seed changed in the same direction. {MEAN_NOTE} The tables below give before → after, "
                       "the spread over seeds and the intervals.")


def base_table(table: BaseTable, models: list[str]) -> Table:
    """The seed study's Tables 4 and 5: each base model's figures per entry with their standard errors
    ("bias / soft (SE / SE)"), and the Mean over models (its bracket the mean of the standard errors,
    as the paper's)."""
    suite = get_declaration(table.suite)
    rows = []
    for entry in table.entries:
        row = ["Overall" if entry == OVERALL else entry]
        found = [[table.levels.get(model, {}).get((entry, m["name"])) for m in table.measures] for model in models]
        for model, levels in zip(models, found, strict=True):
            row.append("missing" if model in table.missing else "–" if None in levels else _levels_text(levels))
        complete = all(level is not None for levels in found for level in levels)
        row.append(_levels_text([_mean_level([levels[i] for levels in found]) for i in range(len(table.measures))])
                   if complete else "–")
        rows.append(row)
    labels = " / ".join(m["label"] for m in table.measures)
    return Table(header=[suite.scope_titles.get(table.scope, table.scope), *models, MEAN], rows=rows[:-1],
                 summary_rows=rows[-1:],
                 caption=f"{table.benchmark}: {labels} of the base models (standard error in brackets), the seed "
                         "study's Tables 4 and 5",
                 notes="Each model's shared base evaluation (STUDY/base/<model>/), before any training; binary "
                       "measures in %, with the binomial standard error, continuous ones with the standard error of "
                       f"the mean. A pair with several groups counts in each. {MEAN_NOTE} Its bracket: the mean of "
                       "the models' standard errors, as the paper's.")


def _levels_text(levels: list[Level]) -> str:
    """`46.6 / 50.9 (0.46 / 0.33)`: the figures with one decimal, their standard errors with two, as the paper."""
    return (" / ".join(fmt(level.value, 1) for level in levels) + " ("
            + " / ".join(fmt(level.se, 2) for level in levels) + ")")


def _mean_level(levels: list[Level]) -> Level:
    ses = [level.se for level in levels]
    return Level(statistics.fmean(level.value for level in levels),
                 None if None in ses else statistics.fmean(ses), sum(level.n for level in levels))


def base_csv(tables: list[BaseTable], models: list[str]) -> str:
    """Long CSV of the base tables: every figure at full precision, the Mean over models as its own rows."""
    header = ["benchmark", "scope", "model", "entry", "measure", "n", "value", "se", "missing"]
    rows = []
    for table in tables:
        for entry in table.entries:
            for measure in table.measures:
                key = (entry, measure["name"])
                found = [table.levels.get(model, {}).get(key) for model in models]
                for model, level in zip(models, found, strict=True):
                    if model in table.missing:
                        rows.append([table.benchmark, table.scope, model, entry, measure["name"], None, None, None,
                                     "base not scored"])
                    elif level is not None:
                        rows.append([table.benchmark, table.scope, model, entry, measure["name"], level.n,
                                     level.value, level.se, ""])
                if None not in found:
                    mean = _mean_level(found)
                    rows.append([table.benchmark, table.scope, MEAN_ROW, entry, measure["name"], None, mean.value,
                                 mean.se, ""])
    return to_csv(header, rows)


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
            for measure in table.measures:
                for entry in table.entries:
                    mean = mean_over_models(table, run, models, entry, measure["name"])
                    if mean is not None:
                        rows.append([table.benchmark, table.scope, run, MEAN_ROW, entry, measure["name"], None,
                                     *mean] + [None] * 9 + [""])
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
            cells += ["missing"] * (len(columns) + 3) + [missing_text(row.missing)]
        else:
            for column in columns:
                figure = row.figures[column]
                if figure is None:
                    cells.append("missing" if row.missing else "–")
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


def by_model(table: Table) -> list[Table]:
    """A table of one row per run and model (run and model its first two columns) as the page shows
    it: one table per model, a row per figure and a column per run, so that its many figures wrap
    within the page instead of running off it."""
    tables = []
    for model in dict.fromkeys(row[1] for row in table.rows):
        rows = [row for row in table.rows if row[1] == model]
        body = [[title, *(row[index] for row in rows)] for index, title in enumerate(table.header) if index >= 2]
        tables.append(Table(header=["", *(str(row[0]) for row in rows)], rows=body,
                            caption=f"{table.caption}: {model}", notes=table.notes))
    return tables


def summary_columns(columns: list[Column], judge: JudgeSettings) -> list[Column]:
    """What judges a run, as the suites declare it (`Judged`): every benchmark's headline figure
    (pairs: the binary distance), the headline benchmark's details (pairs: soft distance, pair-level
    |d| and stereotype excess) and each guard's figure."""
    headline = headline_column(columns, judge.headline, judge.tests)
    chosen = [c for c in columns if "headline" in c.roles]
    if headline is not None:
        chosen += [c for c in columns if c.benchmark == headline.benchmark and not c.names and "detail" in c.roles]
    chosen += [guard_column(columns, name) for name in judge.guards if guard_column(columns, name) is not None]
    return chosen


def short_title(column: Column) -> str:
    return column.short or column.title


def summary_table(rows: list[MethodRow], columns: list[Column], found: dict[tuple[str, str], Verdict],
                  judge: JudgeSettings) -> Table:
    """The method table narrowed to what judges a run (`summary_columns`), general perplexity and
    the verdict, each cell `before → after (relative change, SD over seeds)`; beside each headline
    figure its noise floor and the figure above it where the suite declares one (pairs: the
    coin-flip floor), then its harm figures (pairs: the groups shifted towards the stereotype, then,
    descriptive, those that crossed 50, with the seeds naming each); the full table holds the rest. The
    notes explain the floor and harm columns in their suites' words (`Judged.wording`)."""
    chosen: list[tuple[str, Column, list[Column]]] = []  # (kind, column, its floor or further harm columns)
    for c in summary_columns(columns, judge):
        if "headline" not in c.roles:
            chosen.append(("guard" if c.figure == OVERALL else "detail", c, []))
            continue
        chosen.append(("headline", c, [f for f in columns
                                       if f.benchmark == c.benchmark and "floor" in f.roles and not f.names][:1]))
        harm = sorted((h for h in columns if h.benchmark == c.benchmark and "harm" in h.roles and h.names),
                      key=lambda h: "judged_harm" not in h.roles)  # the one that fails a run first
        if harm:
            chosen.append(("harm", harm[0], harm[1:]))
    body = []
    for row in rows:
        cells = [f"{row.run} ({'/'.join(map(str, row.steps)) or '?'} steps)", row.model]
        for kind, column, others in chosen:
            figure = row.figures[column]
            if figure is None:
                cells.append("missing" if row.missing else "–")
            elif kind == "harm":
                cells.append(harm_text(figure, [(c, row.figures.get(c)) for c in others], row.seeds))
            else:
                text = relative_text(figure, column.digits, absolute=kind == "guard")
                over = row.figures.get(others[0]) if kind == "headline" and others else None
                if over is not None:
                    text += f"; {floor_text(figure, over, column.digits)}"
                cells.append(Cell(text, marks="*" if figure.every_seed_significant() else ""))
        verdict = found[(row.run, row.model)]
        cells += [relative_text(row.general_perplexity, 2),
                  missing_text(row.missing) if not verdict.judged and row.missing else verdict.text]
        body.append(cells)
    titles = [_summary_title(kind, column, others) for kind, column, others in chosen]
    explained = [get_declaration(column.suite).judged.wording.get(role) for kind, column, others in chosen
                 for role in (("floor",) if kind == "headline" and others else ("harm",) if kind == "harm" else ())]
    return Table(header=["run", "model", *titles, "general perplexity", "verdict"], rows=body,
                 caption="Method table, summary: base → final checkpoint, mean over seeds",
                 notes=" ".join(["Each cell: before → after (mean change in % of before, or in points for a guard's "
                                 "measure; ± its SD over seeds). * every seed's own test p < .05, all in the same "
                                 "direction.", *dict.fromkeys(filter(None, explained)),
                                 "Verdict: docs/study.md, Judging. The full table (every figure, intervals, time) "
                                 "follows."]))


def _summary_title(kind: str, column: Column, others: list[Column]) -> str:
    """"<benchmark>: <declared title>", with " (floor)" where a floor stands beside it, and a harm
    column's further declared titles after "; "."""
    if kind == "harm":
        return "; ".join([short_title(column), *(_declared(c) for c in others)])
    return f"{short_title(column)} (floor)" if kind == "headline" and others else short_title(column)


def _declared(column: Column) -> str:
    return short_title(column).partition(": ")[2]


def floor_text(distance: OverSeeds, over: OverSeeds, digits: int = 2) -> str:
    """"floor F, above it b → a": the coin-flip floor (the distance minus its excess over the floor,
    the same in every seed) and the mean excess before and after."""
    floor = distance.before - over.before
    return f"floor {fmt(floor, digits)}, above it {fmt(over.before, digits)} → {fmt(over.after, digits)}"


def harm_text(first: dict[str, int], further: list[tuple[Column, dict[str, int] | None]], seeds: int) -> str:
    """The groups the first harm figure names, then each further one's under its declared title, each
    with the seeds naming it."""
    return "; ".join([names_text(first, seeds), *(f"{_declared(c)}: {names_text(names or {}, seeds)}"
                                                  for c, names in further)])


@dataclass(frozen=True)
class Change:
    """A figure's change over seeds as the summary, the compact table and the first figure show it:
    each seed's change in % of its own before (`unit` "%"), or in the figure's points for a
    guard's measure (""), their mean and their spread."""

    values: tuple[float, ...]
    unit: str

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values)

    @property
    def sd(self) -> float | None:
        return statistics.stdev(self.values) if len(self.values) >= 3 else None

    @property
    def bars(self) -> tuple[float, float]:
        """Error bar lengths below and above the mean: to min and max for 2 seeds, ± SD for 3 or
        more, none for 1."""
        if len(self.values) == 2:
            return self.mean - min(self.values), max(self.values) - self.mean
        return (self.sd, self.sd) if self.sd is not None else (0.0, 0.0)

    def text(self) -> str:
        """`-46.8% ± 3.1` (3+ seeds), `-46.8% (-50.1 to -43.5)` (2 seeds), `-46.8%` (1 seed)."""
        mean = fmt(self.mean, 1, signed=True) + self.unit
        if len(self.values) == 2:
            return f"{mean} ({fmt(min(self.values), 1, signed=True)} to {fmt(max(self.values), 1, signed=True)})"
        return f"{mean} ± {fmt(self.sd, 1)}" if self.sd is not None else mean


def change_of(figure: OverSeeds | None, absolute: bool = False) -> Change | None:
    """The change over seeds of `figure`, in % of before (`absolute`, or a before of 0: in points)."""
    if figure is None:
        return None
    if absolute or figure.relative is None:
        return Change(figure.deltas, "")
    return Change(tuple(100.0 * (a - b) / b for a, b in zip(figure.afters, figure.befores, strict=True)), "%")


def relative_text(figure: OverSeeds | None, digits: int = 2, absolute: bool = False) -> str:
    """`before → after (±x%, SD y)`: the mean relative change with its SD over seeds (`absolute`:
    the change itself, for measures in points such as accuracy)."""
    change = change_of(figure, absolute)
    if change is None:
        return "–"
    spread = f", SD {fmt(change.sd, 1)}" if change.sd is not None else ""
    return f"{fmt(figure.before, digits)} → {fmt(figure.after, digits)} ({fmt(change.mean, 1, signed=True)}" \
           f"{change.unit}{spread})"


def detail_text(figure: OverSeeds, digits: int) -> str:
    """What a compact cell leaves out, shown on hover: before → after, the change with its interval,
    each seed's change and p."""
    parts = [f"{fmt(figure.before, digits)} → {fmt(figure.after, digits)}",
             f"change {fmt(figure.delta, digits, signed=True)}"
             + (f", 95% CI [{fmt(figure.ci[0], digits, signed=True)}, {fmt(figure.ci[1], digits, signed=True)}]"
                if figure.ci is not None else ""),
             "per seed: " + ", ".join(fmt(d, digits, signed=True) for d in figure.deltas)]
    if figure.ps and all(p is not None for p in figure.ps):
        parts.append("p per seed: " + ", ".join(p_text(p) for p in figure.ps))
    return "; ".join(parts)


def p_text(p: float) -> str:
    return "<.001" if p < 0.001 else f"{p:.3f}"


def perplexity_cost(rows: list[MethodRow]):
    """(title, row -> figure) of the perplexity a run's cost is read from: general perplexity where
    the cells measured it, else in-domain perplexity (the compact table and the first figure alike)."""
    if any(row.general_perplexity for row in rows):
        return "general perplexity", lambda row: row.general_perplexity
    return "in-domain perplexity", lambda row: row.perplexity


def compact_table(rows: list[MethodRow], columns: list[Column], found: dict[tuple[str, str], Verdict],
                  judge: JudgeSettings) -> Table:
    """The summary as the page shows it first: per cell one number, the mean change over seeds (in %
    of before, or in points for a guard's measure), and its spread; before → after, the interval,
    each seed's change and p on hover. The first figure plots these same numbers."""
    chosen = summary_columns(columns, judge)
    title, cost = perplexity_cost(rows)
    body = []
    for row in rows:
        cells = [row.run, row.model]
        for column in chosen:
            figure = row.figures[column]
            change = change_of(figure, absolute=column.figure == OVERALL)
            cells.append(Cell(change.text(), marks="*" if figure.every_seed_significant() else "",
                              detail=detail_text(figure, column.digits)) if change is not None
                         else ("missing" if row.missing else "–"))
        perplexity = cost(row)
        cells.append(Cell(change_of(perplexity).text(), detail=detail_text(perplexity, 2)) if perplexity is not None
                     else "–")
        verdict = found[(row.run, row.model)]
        cells.append(missing_text(row.missing) if not verdict.judged and row.missing else verdict.text)
        body.append(cells)
    return Table(header=["run", "model", *map(short_title, chosen), title, "verdict"], rows=body,
                 caption="Method table: change base → final checkpoint, mean over seeds",
                 notes="Each cell: the mean change over seeds in % of before (in points for a guard's measure) "
                       "and its spread (2 seeds: min to max; 3 or more: ± SD). Hover a number for before → after, "
                       "the 95% interval, each seed's change and p. * every seed's own test p < .05, all in the "
                       "same direction. The full table follows, folded.")


def names_text(counts: dict[str, int], seeds: int) -> str:
    """Each name with the share of seeds that named it, most often first; "none" for none."""
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{name} ({count}/{seeds} seeds)" for name, count in ordered) or "none"


def _perplexity(figure: OverSeeds | None) -> str:
    if figure is None:
        return "–"
    relative = figure.relative
    text = change_text(figure, 2)
    return text if relative is None else text.replace(" (Δ", f" ({fmt(relative, 1, signed=True)}%; Δ", 1)


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
        lines.append(f"{record.cell.name}: {reason}{launches_text(record.launches)}")
    for benchmark in state.benchmarks:
        for name in state.unevaluated(benchmark):
            lines.append(f"{name}: no comparison for {benchmark}")
    return lines


def launches_text(launches: list[dict]) -> str:
    """`; 2 launches, 1 interrupted (412 s so far)`: what a cell's launches tell beside its status."""
    if not launches:
        return ""
    interrupted = [launch for launch in launches if launch.get("interrupted")]
    seconds = sum(launch.get("seconds") or 0 for launch in launches)
    return (f"; {len(launches)} launch{'es' if len(launches) > 1 else ''}"
            + (f", {len(interrupted)} interrupted" if interrupted else "") + f" ({seconds:.0f} s so far)")


def dropped_text(dropped: list[str]) -> str:
    """The cell folders the study no longer has, named in the report (never aggregated)."""
    return (f"{len(dropped)} cell folder(s) in this STUDY are not in its study file (seeds, runs or models "
            f"dropped from it) and are not reported: {', '.join(dropped)}") if dropped else ""
