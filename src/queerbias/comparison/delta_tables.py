"""The delta document of any suite as tables: entries × compared runs, cells "Δm1 / Δm2" with stars.

Layout follows the seed paper's Tables 6 and 7 so results can be set side by side:
the main table shows the first scope's entries (identity groups, settings, strategies)
and Overall; a details table per comparison and scope gives every statistic;
delta.csv is the long machine-readable form (one row per comparison, scope and entry).
"""

from __future__ import annotations

from statistics import fmean

from queerbias.report.formatting import best_sentence, format_p, star_legend, stars_of, with_ci
from queerbias.report.options import CORRECTIONS
from queerbias.report.tables import Cell, Table, fmt, to_csv, to_latex, to_markdown
from queerbias.suites.protocol import BINARY, CONTINUOUS, OVERALL
from queerbias.suites.registry import get_suite

OVERALL_ROW = "overall"
NOT_SELECTED = ("No checkpoint is chosen by this benchmark: it is a test split, judged on and never selected on "
                "(the best checkpoints are those of the run's other benchmarks).")


def render_delta_tables(document: dict) -> dict[str, str]:
    """Markdown (main table, per-comparison details, trajectory), CSV and LaTeX (main table)."""
    main = delta_table(document)
    markdown = [f"# {report_title(document)}: change against {_before_label(document)}", "", to_markdown(main)]
    for comparison in document["comparisons"]:
        for scope in document["scopes"] or [OVERALL]:
            markdown += ["", to_markdown(details_table(document, comparison, scope))]
    markdown += [block for table in _suite(document).extra_tables(document) for block in ("", to_markdown(table))]
    if "trajectory" in document:
        chosen = best_sentence(document["best"]) if document.get("best") else NOT_SELECTED
        markdown += ["", to_markdown(trajectory_table(document)), "", chosen]
    if "verdict" in document:  # a training run's own report
        markdown += ["", f"The training run's verdict: {document['verdict']['text']}."]
    return {"md": "\n".join(markdown) + "\n", "csv": render_delta_csv(document), "tex": to_latex(main)}


def report_title(document: dict) -> str:
    """What a report is of, for its titles: "bias (queerbias-de:test)", a training run's benchmark
    (`benchmark`) and its data; for other runs the suite and its data, "pairs (queerbias-de)"."""
    data = (document["meta"].get("data") or {}).get("name")
    name = document.get("benchmark") or document["suite"]
    return f"{name} ({data})" if data and data != name else name


def _measures(document: dict, kinds=None) -> list[dict]:
    return [m for m in document["measures"] if kinds is None or m["kind"] in kinds]


def _suite(document: dict):
    return get_suite(document["suite"])


def _scope_title(document: dict, scope: str) -> str:
    return _suite(document).scope_titles.get(scope, scope)


def delta_table(document: dict) -> Table:
    """The first scope's entries as rows, AFTER runs as columns plus an (untested) Mean column."""
    comparisons = document["comparisons"]
    scope = document["scopes"][0] if document["scopes"] else None
    names = list(dict.fromkeys(name for c in comparisons for name in c.get(scope, {}))) if scope else []
    measures = [m for m in _measures(document) if f"delta_{m['name']}" in comparisons[0][OVERALL]]
    rows = [[name, *_delta_cells([c.get(scope, {}).get(name) for c in comparisons], measures)] for name in names]
    summary_rows = [["Overall", *_delta_cells([c[OVERALL] for c in comparisons], measures)]]
    figures = {name: title for name, title in _suite(document).figures.items() if all(name in c for c in comparisons)}
    summary_rows += [[title, *_delta_cells([_starred(c[name], measures) for c in comparisons], measures)]
                     for name, title in figures.items()]
    unit = measures[0]["unit"] if len({m["unit"] for m in measures}) == 1 else ""
    meta = document["meta"]
    figure_note = "".join(f" {title}: its change, stars by its paired bootstrap p." for title in figures.values())
    return Table(
        header=[_scope_title(document, scope) if scope else "", *[c["after"]["label"] for c in comparisons], "Mean"],
        rows=rows,
        summary_rows=summary_rows,
        caption=(f"Change against {_before_label(document)}: " + " / ".join(f"Δ{m['name']}" for m in measures)
                 + (" (percentage points)" if unit == "pp" else "")),
        notes=(f"{_tests_sentence(document, measures)}; stars by {CORRECTIONS[meta['correction']]}-adjusted "
               f"p across the entries of each column (Overall unadjusted): {star_legend()}.{figure_note} Mean: "
               "unweighted mean over columns, not tested."),
    )


def _starred(figure: dict, measures: list[dict]) -> dict:
    """A comparison-level figure as a delta cell: its unadjusted p decides the stars."""
    return {**figure, **{f"stars_{m['name']}": stars_of(figure.get(f"p_{m['name']}")) for m in measures}}


def _tests_sentence(document: dict, measures: list[dict]) -> str:
    meta = document["meta"]
    tests = {BINARY: "the exact McNemar test", CONTINUOUS: f"the {meta['soft_test_description']}",
             "statistic": "a paired bootstrap test"}
    return "; ".join(f"Δ{m['name']} tested with {tests[m['kind']]}" for m in measures)


def details_table(document: dict, comparison: dict, scope: str) -> Table:
    """Every statistic of one comparison and scope: scores, deltas with intervals, counts, p, effects."""
    measures = [m for m in _measures(document) if f"delta_{m['name']}" in comparison[OVERALL]]
    single_binary = len(_measures(document, (BINARY,))) == 1
    header = [_scope_title(document, scope) if scope != OVERALL else "", "n"]
    for m in measures:
        name = m["name"]
        header += [f"{name} before", f"{name} after", f"Δ{name} [95% CI]"]
        header += ["b", "c", "p", "p adj", "g"] if m["kind"] == BINARY else \
            ["p", "p adj", "effect"] if m["kind"] == CONTINUOUS else ["p", "p adj"]

    def row(name: str, s: dict) -> list:
        cells = [name, str(s["n"])]
        for m in measures:
            key, digits = m["name"], m.get("digits", 2)
            suffix = "" if single_binary else f"_{key}"
            cells += [fmt(s.get(f"{key}_before"), digits), fmt(s.get(f"{key}_after"), digits),
                      Cell(with_ci(s.get(f"delta_{key}"), s.get(f"ci_{key}"), digits), marks=s.get(f"stars_{key}", ""))]
            if m["kind"] == BINARY:
                cells += [str(s[f"b{suffix}"]), str(s[f"c{suffix}"])]
            cells += [format_p(s.get(f"p_{key}")), format_p(s.get(f"p_{key}_adj"))]
            if m["kind"] == BINARY:
                cells.append(fmt(s[f"cohens_g{suffix}"], 3))
            elif m["kind"] == CONTINUOUS:
                cells.append(fmt(s[f"effect_{key}"], 3))
        return cells

    before, after = comparison["before"]["label"], comparison["after"]["label"]
    entries = comparison.get(scope, {}) if scope != OVERALL else {}
    meta = document["meta"]
    return Table(
        header=header,
        rows=[row(name, stats) for name, stats in entries.items()],
        summary_rows=[row("Overall", comparison[OVERALL])] if scope in (OVERALL, *document["scopes"][:1]) else [],
        caption=f"{after} against {before}" + ("" if scope == OVERALL else f": {scope}"),
        notes=(f"b: items flagged before but not after, c: the reverse; g: Cohen's g of the McNemar test; "
               f"effect: {meta['soft_effect']}; {meta['ci']} interval over {meta['n_resamples']} "
               f"resamples (seed {meta['seed']})."),
    )


def trajectory_table(document: dict) -> Table:
    """Overall figures (and the suite's comparison-level figures) per training step, the chosen
    checkpoint in bold."""
    rows, best = document["trajectory"], document.get("best")
    columns = [(m["name"], m["name"], m.get("digits", 2)) for m in _measures(document) if m["name"] in rows[0]]
    columns += [(f"{figure} ({m['name']})", f"{figure}_{m['name']}", m.get("digits", 2))
                for figure in _suite(document).figures for m in _measures(document) if f"{figure}_{m['name']}" in rows[0]]
    body = []
    for r in rows:
        chosen = best is not None and r["label"] == best["label"]
        cells = [Cell(r["label"], bold=chosen), str(r["step"])]
        for _, key, digits in columns:
            cells += [fmt(r[key], digits), with_ci(r[f"delta_{key}"], r[f"ci_{key}"], digits)]
        body.append(cells + [fmt(r["perplexity"]), fmt(r["ppl_change_pct"], 1, signed=True)])
    header = ["Checkpoint", "step", *[h for title, _, _ in columns for h in (title, "Δ [95% CI]")],
              "perplexity", "Δppl %"]
    return Table(header=header, rows=body, caption="Training trajectory (overall)")


def render_delta_csv(document: dict) -> str:
    """One row per comparison, scope and entry (group "overall" for all items), full precision."""
    return to_csv(*delta_rows(document))


def delta_rows(document: dict) -> tuple[list[str], list[list]]:
    """Header and rows of delta.csv: comparison, scope and entry, then every statistic."""
    entries = [(c, OVERALL, OVERALL_ROW, c[OVERALL]) for c in document["comparisons"]]
    for c in document["comparisons"]:
        entries += [(c, scope, name, stats) for scope in document["scopes"] for name, stats in c.get(scope, {}).items()]
    columns = list(dict.fromkeys(key for *_, stats in entries for key in stats))
    header = ["before", "after", "after_step", "scope", "group", *_flat_names(columns)]
    rows = [[c["before"]["label"], c["after"]["label"], c["after"].get("step"), scope, name,
             *_flat_values(stats, columns)] for c, scope, name, stats in entries]
    return header, rows


def render_trajectory_csv(document: dict) -> str:
    """The trajectory rows, intervals split into _low/_high columns."""
    rows = document["trajectory"]
    columns = list(rows[0])
    return to_csv(_flat_names(columns), [_flat_values(r, columns) for r in rows])


def _delta_cells(entries: list[dict | None], measures: list[dict]) -> list:
    def cell(e: dict, m: dict) -> Cell:
        return Cell(fmt(e[f"delta_{m['name']}"], m.get("digits", 2), signed=True), marks=e[f"stars_{m['name']}"])

    cells = [tuple(cell(e, m) for m in measures) if e else "–" for e in entries]
    present = [e for e in entries if e]
    cells.append(tuple(fmt(_mean([e[f"delta_{m['name']}"] for e in present]), m.get("digits", 2), signed=True)
                       for m in measures))
    return cells


def _mean(values: list) -> float | None:
    known = [v for v in values if v is not None]
    return fmean(known) if known else None


def _flat_names(columns) -> list[str]:
    return [name for c in columns for name in ((f"{c}_low", f"{c}_high") if c.startswith("ci_") else (c,))]


def _flat_values(entry: dict, columns) -> list:
    def split(value):
        return value if isinstance(value, list) else [None, None]

    return [value for c in columns for value in (split(entry.get(c)) if c.startswith("ci_") else (entry.get(c),))]


def _before_label(document: dict) -> str:
    return document["comparisons"][0]["before"]["label"]
