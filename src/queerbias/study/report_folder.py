"""STUDY/report/: the tables (Markdown, LaTeX, CSV), the figures and one HTML page.

Files: `methods.{md,tex,csv}` (the method table), `base-<benchmark>.{md,tex,csv}` (per benchmark,
the base models per group with standard errors and the Mean over models: the seed study's Tables 4
and 5), `groups-<benchmark>.{md,tex,csv}` (per benchmark and run, the change per group × model with
the Mean over models as the seed study's Tables 6 and 7, then the group × model tables of every
measure), `figures/*.png`,
`status.json` (complete or not, what is missing, every cell's provenance) and
`index.html`. The report is built in a temporary folder and then replaces the previous
one, so no file of an older report survives beside a newer one. An incomplete study
gets a report that says so at the top of every file and names the missing cells (a cell
started but not finished, with its launches) and the cell folders the study file no
longer has.

The page opens on the answer: the figure of each method's distance change against its
costs with the verdict marked and the chosen run named (`figures.overview`), the one
sentence of the choice, and the compact method table (one number and its spread per cell,
the rest on hover) whose numbers the figure plots; the full method table is folded below
it, then the benchmarks' tables and figures, the study file and every cell's provenance.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml

from queerbias.errors import QueerbiasError
from queerbias.fileio import atomic_write
from queerbias.models.embedded import random_weights
from queerbias.report.tables import Table, to_html, to_latex, to_markdown
from queerbias.study import figures, html
from queerbias.study.aggregate import (
    StudyState,
    base_tables,
    group_tables,
    method_columns,
    method_rows,
    provenance,
    read_state,
)
from queerbias.study.judging import choice_line, goal_lines, headline_column, verdicts
from queerbias.study.tables import (
    base_csv,
    base_table,
    by_model,
    compact_table,
    dropped_text,
    group_csv,
    group_table,
    method_csv,
    method_table,
    paper_delta_table,
    status_lines,
    summary_table,
)
from queerbias.suites.registry import get_declaration

REPORT_DIR = "report"


@dataclass(frozen=True)
class StudyReport:
    """What `queerbias study` and `qb.study` return: where the report is and what it lacks."""

    path: Path
    complete: bool
    missing: list[str]

    @property
    def index(self) -> Path:
        return self.path / "index.html"

    @property
    def methods(self) -> Path:
        return self.path / "methods.md"


def write_report(root: str | Path) -> StudyReport:
    state = read_state(Path(root))
    final = state.root / REPORT_DIR
    if os.path.lexists(final) and not (final / "status.json").is_file():  # the report replaces the folder whole
        raise QueerbiasError(f"{final} is no report this study wrote (no status.json); writing the report would "
                             "replace it: move it away, then write the report again")
    out = state.root / f".{REPORT_DIR}-incoming"
    shutil.rmtree(out, ignore_errors=True)
    (out / "figures").mkdir(parents=True)
    lines = status_lines(state)
    banner = [] if state.complete else ["INCOMPLETE study: figures are given only for models and runs with every "
                                        "seed. Missing:", *(f"- {line}" for line in lines), ""]
    dropped = dropped_text(state.dropped)
    banner += [dropped, ""] if dropped else []
    models, runs = list(state.study.models), list(state.study.runs)
    judge = state.study.judge
    columns = method_columns(state)
    rows = method_rows(state, columns)
    found = verdicts(rows, columns, judge)
    random = [name for name, model in state.study.models.items() if random_weights(str(model.config))]
    goal = goal_lines(rows, columns, judge, found, random)
    body = [html.goal(*goal, met=any(v.chosen for v in found.values())), html.status(state.complete, lines, dropped)]

    choice = choice_line(rows, columns, judge, found)
    table = method_table(rows, columns, found, choice)
    summary = summary_table(rows, columns, found, judge)
    _write_table(out / "methods", [summary, table], banner, " ".join(filter(None, (*goal, intro(state)))),
                 method_csv(rows, columns, found))
    answer = [html.paragraph(choice), to_html(compact_table(rows, columns, found, judge)),
              html.folded("The full method table: before → after, intervals, every figure, time per cell",
                          *map(to_html, by_model(table))), html.paragraph(intro(state))]
    first = figures.overview(rows, columns, found, judge, models, runs, out / "figures" / "overview.png", random)
    if first is not None:
        headline = get_declaration(headline_column(columns, judge.headline, judge.tests).suite).judged.wording
        answer.insert(0, html.figure(first, f"Each run's change of the headline {headline.get('headline', 'figure')} "
                                            "against its costs, mean over seeds, bars the seed spread; filled: passes "
                                            "every guard, hollow: fails, ringed: chosen (passes and lowered the "
                                            "headline); shaded: where a cost fails"))
    body.append(html.section("Which method, at what cost", *answer))
    for benchmark in state.benchmarks:
        body.append(_benchmark(state, benchmark, out, banner, models, runs, rows, columns))

    cells = [provenance(record) for record in state.records]
    body.append(html.section("Study config (study.yaml)",
                             html.preformatted(yaml.safe_dump(state.study.record(), sort_keys=False,
                                                              allow_unicode=True))))
    body.append(html.section("Provenance of every cell", html.long_values(to_html(provenance_table(cells)))))
    atomic_write(out / "status.json", json.dumps({"complete": state.complete, "missing": lines, "cells": cells},
                                                 indent=2, ensure_ascii=False, default=str) + "\n")
    atomic_write(out / "index.html", html.page(f"Study {state.root.name}", body))
    shutil.rmtree(final, ignore_errors=True)
    out.rename(final)
    return StudyReport(final, state.complete, lines)


def intro(state: StudyState) -> str:
    study = state.study
    benchmarks = "; ".join(f"{b.get('name') or b['data']}: {b['data']}"
                           + (f", {b['sample']} sampled" if b.get("sample") else ", all items")
                           + (" (optional)" if b.get("optional") else "") for b in study.benchmarks)
    return (f"{len(state.records)} cells: {len(study.models)} model(s) × {len(study.runs)} run(s) × "
            f"{len(study.seeds)} seed(s) ({', '.join(map(str, study.seeds))}), each an ordinary training run "
            f"judged base → final checkpoint; benchmarks: {benchmarks}.")


def _benchmark(state: StudyState, benchmark: str, out: Path, banner: list[str], models: list[str],
               runs: list[str], rows, columns) -> str:
    if state.skipped_everywhere(benchmark):
        note = f"{benchmark}: skipped by every cell (its data is not available offline where the cells ran)."
        atomic_write(out / f"groups-{benchmark}.md", note + "\n")
        return html.section(f"Benchmark {benchmark}", html.paragraph(note))
    parts, tables = [], []
    bases = base_tables(state, benchmark)
    if bases:
        shown = [base_table(table, models) for table in bases]
        _write_table(out / f"base-{benchmark}", shown, banner, f"Benchmark {benchmark}, the base models per group "
                     "(the seed study's Tables 4 and 5).", base_csv(bases, models))
        parts.append(html.folded(f"Base models: {benchmark} per group and model, with standard errors (the seed "
                                 "study's Tables 4 and 5)", *map(to_html, shown)))
    scopes = group_tables(state, benchmark)
    for scope_table in scopes:
        for run in runs:
            paper = paper_delta_table(scope_table, run, models)
            tables.append(paper)
            shown = [to_html(paper)]
            for measure in scope_table.measures:
                table = group_table(scope_table, run, measure, models)
                tables.append(table)
                shown.append(to_html(table))
            stem = f"{benchmark}-{scope_table.scope}-{run}"
            for kind, draw in (("heatmap", figures.heatmap), ("forest", figures.seeds_forest)):
                path = draw(scope_table, run, models, out / "figures" / f"{kind}-{stem}.png")
                parts.append(html.figure(path, f"{kind}: {benchmark}, {scope_table.scope}, run {run}"))
            parts.append(html.folded(f"Tables: {benchmark}, {scope_table.scope}, run {run} (before → after, "
                                     "intervals, markers)", *shown))
    mine = [c for c in columns if c.benchmark == benchmark]
    if mine:
        path = figures.tradeoff(rows, mine, runs, models, out / "figures" / f"tradeoff-{benchmark}.png")
        if path is not None:
            parts.append(html.figure(path, f"trade-off: {benchmark} against perplexity"))
    csv = group_csv(scopes, runs, models)
    _write_table(out / f"groups-{benchmark}", tables, banner, f"Benchmark {benchmark}, per group and model.", csv)
    return html.section(f"Benchmark {benchmark}", *parts)


def _write_table(stem: Path, tables: list[Table], banner: list[str], intro_text: str, csv: str) -> None:
    atomic_write(stem.parent / f"{stem.name}.md", "\n".join([*banner, intro_text, "",
                                                             *(to_markdown(t) for t in tables)]))
    comments = [f"% {line}" for line in banner if line]
    atomic_write(stem.parent / f"{stem.name}.tex", "\n".join([*comments, *(to_latex(t) for t in tables)]))
    atomic_write(stem.parent / f"{stem.name}.csv", csv)


def provenance_table(cells: list[dict]) -> Table:
    rows = []
    for info in cells:
        versions = info.get("versions") or {}
        data = "; ".join(f"{name}: {b['data']} {b['checksum']} ({b['n_items']} items)"
                         for name, b in info["benchmarks"].items())
        launches = str(info["launches"]) + (f" ({info['interrupted']} interrupted)" if info["interrupted"] else "")
        rows.append([info["cell"], info["status"] + (f": {info['last_line']}" if info["last_line"] else ""),
                     ", ".join(info["commits"]) or "–",
                     ", ".join(f"{k} {v}" for k, v in versions.items() if v) or "–",
                     info.get("fingerprint") or "–", data or "–", launches,
                     "–" if info["seconds"] is None else f"{info['seconds']:.0f} s"])
    return Table(header=["cell", "status", "commit", "versions", "model fingerprint", "data (checksum)",
                         "launches", "time"], rows=rows)
