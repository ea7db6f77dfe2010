"""The study's figures: the answer first (each method's distance change against its costs, the
verdict marked), the change per group × model as a heatmap, the forest plot over seeds, and
the trade-off of every bias figure against perplexity per method.

Drawn with `report.plots`' figure helpers (outside pyplot, fixed pixel sizes, the
Okabe-Ito palette, atomic PNG writes); the heatmap's colours are a diverging map
centred on no change, each cell's label black or white by the cell's luminance.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from matplotlib import colormaps

from queerbias.report.plots import NEUTRAL, PALETTE, forest_figure, new_figure, save_figure
from queerbias.report.tables import fmt
from queerbias.study.aggregate import Column, GroupTable, MethodRow
from queerbias.study.judging import JudgeSettings, Verdict, better, guard_column, headline_column
from queerbias.study.tables import Change, change_of, perplexity_cost, short_title
from queerbias.suites.protocol import OVERALL

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: purple (less) to orange (more), colour-blind safe; grey where a model and run lack seeds
DIVERGING = colormaps["PuOr_r"].with_extremes(bad="#dddddd")
CELL_PX, ROW_PX, MARGIN_PX = 130, 30, 230
TRADEOFF_PX, TRADEOFF_COLUMNS = (560, 480), 3
OVERVIEW_PANEL_PX, OVERVIEW_HEIGHT_PX = 580, 520
#: the PNG text chunk in which the first figure records the points it drew (tests compare them with the table)
POINTS_KEY = "queerbias:points"
FAIL_REGION = "#f6d5d1"


def _labels(entries: list[str]) -> list[str]:
    return ["Overall" if entry == OVERALL else entry for entry in entries]


def heatmap(table: GroupTable, run: str, models: list[str], path: Path) -> Path:
    """Mean change over seeds per entry (rows) and model (columns), one panel per measure; each cell
    is written with its marker; a model and run lacking seeds is grey (n/a)."""
    width = (MARGIN_PX + CELL_PX * len(models)) * len(table.measures)
    fig, axes = new_figure((width, 160 + ROW_PX * len(table.entries)), ncols=len(table.measures))
    for ax, measure in zip(axes, table.measures, strict=True):
        values = np.full((len(table.entries), len(models)), np.nan)
        marks = {}
        for col, model in enumerate(models):
            for row, entry in enumerate(table.entries):
                found = table.figures.get((run, model), {}).get((entry, measure["name"]))
                if found is not None:
                    values[row, col] = found.figure.delta
                    marks[(row, col)] = found.marker
        limit = float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 1.0
        image = ax.imshow(np.ma.masked_invalid(values), cmap=DIVERGING, vmin=-(limit or 1.0), vmax=limit or 1.0,
                          aspect="auto")
        for (row, col), value in np.ndenumerate(values):
            text = "n/a" if np.isnan(value) else fmt(float(value), measure.get("digits", 2), signed=True) \
                + marks.get((row, col), "")
            background = image.cmap(image.norm(value)) if np.isfinite(value) else image.cmap.get_bad()
            ax.text(col, row, text, ha="center", va="center", fontsize="small", color=label_colour(background))
        ax.set_xticks(range(len(models)), models, rotation=20, ha="right")
        ax.set_yticks(range(len(table.entries)), _labels(table.entries))
        ax.axhline(len(table.entries) - 1.5, color=NEUTRAL, linewidth=0.8)
        ax.set_title(f"Δ {measure['label']}" + (" (pp)" if measure.get("unit") == "pp" else ""))
        fig.colorbar(image, ax=ax, shrink=0.8)
    fig.suptitle(f"{table.benchmark}, run {run}: change base → final, mean over seeds")
    return save_figure(fig, path)


def label_colour(rgba) -> str:
    """Black or white, whichever reads on a cell of this colour: black where the cell's relative
    luminance (WCAG 2.x, from linearised sRGB) exceeds 0.179, where both contrast ratios are equal."""
    def linear(channel: float) -> float:
        return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4

    red, green, blue = (linear(c) for c in rgba[:3])
    return "black" if 0.2126 * red + 0.7152 * green + 0.0722 * blue > 0.179 else "white"


def seeds_forest(table: GroupTable, run: str, models: list[str], path: Path) -> Path:
    """Per entry and model: each seed's change (small dots), the mean change (filled: marked
    significant) and the mean of the seeds' bootstrap intervals (line)."""
    series = [(model, [table.figures.get((run, model), {}) for _ in table.entries]) for model in models]
    panels = [(measure, table.entries) for measure in table.measures]
    title = f"{table.benchmark}, run {run}: change base → final over seeds (filled: marked significant)"
    return save_figure(forest_figure(_labels(table.entries), series, panels, title, "", draw=_seeds_panel), path)


def _seeds_panel(ax, labels: list[str], series: list, panel: tuple, summary_row: bool = True,
                 legend: bool = True) -> None:
    measure, entries = panel
    offsets = np.linspace(-0.25, 0.25, len(series)) if len(series) > 1 else np.zeros(1)
    for index, (model, figures) in enumerate(series):
        colour = PALETTE[index % len(PALETTE)]
        for row, (entry, found) in enumerate(zip(entries, figures, strict=True)):
            figure = found.get((entry, measure["name"]))
            if figure is None:
                continue
            y = row + offsets[index]
            if figure.figure.ci is not None:
                ax.plot(figure.figure.ci, [y, y], color=colour, linewidth=1.8)
            ax.plot(figure.figure.deltas, [y] * figure.figure.seeds, "|", color=colour, markersize=9, alpha=0.7)
            ax.plot(figure.figure.delta, y, "o", markersize=7, color=colour, markeredgewidth=1.6,
                    markerfacecolor=colour if figure.marker else "white",
                    label=model if legend and row == 0 else None)
    ax.axvline(0.0, color=NEUTRAL, linewidth=1, linestyle="--", zorder=0)
    if summary_row:
        ax.axhline(len(labels) - 1.5, color=NEUTRAL, linewidth=0.6)
    ax.set_xlabel(f"Δ {measure['label']}" + (" (percentage points)" if measure.get("unit") == "pp" else ""))
    ax.grid(axis="x", alpha=0.3)


def tradeoff(rows: list[MethodRow], columns: list[Column], runs: list[str], models: list[str],
             path: Path) -> Path | None:
    """Each figure of one benchmark against the change of perplexity (general where measured, else
    in-domain), one point per run (colour) and model (marker), bars: the spread over seeds."""
    columns = [column for column in columns if not column.names]
    if not columns:
        return None
    ncols = min(len(columns), TRADEOFF_COLUMNS)
    nrows = -(-len(columns) // ncols)
    fig, axes = new_figure((TRADEOFF_PX[0] * ncols, TRADEOFF_PX[1] * nrows), nrows=nrows, ncols=ncols)
    for unused in axes[len(columns):]:
        unused.set_axis_off()
    general = any(row.general_perplexity for row in rows)
    drawn = False
    for ax, column in zip(axes, columns, strict=False):
        for row in rows:
            figure = row.figures.get(column)
            ppl = row.general_perplexity if general else row.perplexity
            if figure is None or ppl is None:
                continue
            x, y = change_of(ppl), Change(figure.deltas, "")
            if x.unit != "%":
                continue
            ax.errorbar(x.mean, y.mean, xerr=_bars(x), yerr=_bars(y),
                        fmt=MARKERS[models.index(row.model) % len(MARKERS)], markersize=8,
                        color=PALETTE[runs.index(row.run) % len(PALETTE)], capsize=3, linewidth=1)
            drawn = True
        ax.axhline(0, color=NEUTRAL, linewidth=1, linestyle="--")
        ax.axvline(0, color=NEUTRAL, linewidth=1, linestyle="--")
        ax.set_xlabel(f"{'general' if general else 'in-domain'} perplexity change (%; lower is better)")
        direction = better(column)
        ax.set_ylabel(f"Δ {column.title.split(': ', 1)[-1]}" + (f" ({direction})" if direction else ""))
        ax.grid(alpha=0.3)
    if not drawn:
        return None
    handles = [axes[0].plot([], [], "o", color=PALETTE[i % len(PALETTE)], label=run)[0] for i, run in enumerate(runs)]
    handles += [axes[0].plot([], [], MARKERS[i % len(MARKERS)], color=NEUTRAL, label=model)[0]
                for i, model in enumerate(models)]
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 6), fontsize="small")
    fig.suptitle(f"{columns[0].benchmark}: bias figures against perplexity, mean over seeds (bars: spread)")
    return save_figure(fig, path)


def _bars(change: Change) -> list[list[float]]:
    below, above = change.bars
    return [[below], [above]]


def overview(rows: list[MethodRow], columns: list[Column], found: dict[tuple[str, str], Verdict],
             judge: JudgeSettings, models: list[str], runs: list[str], path: Path,
             random: list[str]) -> Path | None:
    """The answer first: per run and model the headline benchmark's change of distance to
    indifference (y) against each cost (x): general perplexity (in-domain where not measured) and
    each guard's first measure. The numbers are the compact method table's (`tables.change_of`),
    bars the seed spread; a filled marker passes every guard, a hollow one fails, the chosen run (it
    passes and lowered the headline) is ringed and named, and where a cost fails the judge is shaded.
    Every axis says which way is better; the title says whether any run met the goal and names the
    `random` models (random weights: no finding). The points drawn are read back from the plot and
    recorded in the PNG (`POINTS_KEY`). None when nothing can be drawn."""
    headline = headline_column(columns, judge.headline, judge.tests)
    if headline is None:
        return None
    title, perplexity = perplexity_cost(rows)
    costs = [(title, "% of base; lower is better", lambda row: change_of(perplexity(row)),
              ("above", judge.general_perplexity_pct) if title == "general perplexity" else None)]
    for name, allowed in judge.guards.items():
        guard = guard_column(columns, name)
        if guard is not None:
            costs.append((short_title(guard), f"points; {better(guard)}",
                          lambda row, guard=guard: change_of(row.figures[guard], absolute=True),
                          ("below", -allowed)))
    fig, axes = new_figure((OVERVIEW_PANEL_PX * len(costs), OVERVIEW_HEIGHT_PX), ncols=len(costs))
    points = []
    for ax, (title, unit, cost, limit) in zip(axes, costs, strict=True):
        for row in rows:
            y, x = change_of(row.figures[headline]), cost(row)
            if x is None or y is None:
                continue
            verdict = found[(row.run, row.model)]
            colour = PALETTE[runs.index(row.run) % len(PALETTE)]
            drawn = ax.errorbar(x.mean, y.mean, xerr=_bars(x), yerr=_bars(y), capsize=3, linewidth=1,
                                fmt=MARKERS[models.index(row.model) % len(MARKERS)], markersize=9, color=colour,
                                markeredgewidth=1.8, markerfacecolor=colour if not verdict.failures else "white")
            label = row.run if len(models) == 1 else f"{row.run} ({row.model})"
            if verdict.chosen:
                ax.plot(x.mean, y.mean, "o", markersize=22, markerfacecolor="none", markeredgecolor="black",
                        markeredgewidth=1.5)
                label = f"chosen: {label}"
            ax.annotate(label, (x.mean, y.mean), xytext=(8, 6), textcoords="offset points", fontsize="small",
                        fontweight="bold" if verdict.chosen else "normal")
            points.append({"panel": title, "run": row.run, "model": row.model, **_read_back(drawn),
                           "verdict": "chosen" if verdict.chosen else "fails" if verdict.failures
                           else "passes" if verdict.judged else "not judged"})
        _shade_failing(ax, limit)
        ax.axhline(0, color=NEUTRAL, linewidth=1, linestyle="--")
        ax.axvline(0, color=NEUTRAL, linewidth=1, linestyle="--")
        ax.set_xlabel(f"Δ {title} ({unit})")
        ax.set_ylabel(f"Δ {short_title(headline)} (% of base; {better(headline)})")
        ax.set_title(f"against {title}", fontsize="medium")
        ax.grid(alpha=0.3)
    if not points:
        return None
    random_note = (f"\nrandom weights ({', '.join(random)}): these figures are no finding about bias"
                   if random else "")
    fig.suptitle(chosen_title(found, models) + random_note, fontweight="bold")
    handles = [axes[0].plot([], [], "o", color=PALETTE[i % len(PALETTE)], label=run)[0] for i, run in enumerate(runs)]
    if len(models) > 1:
        handles += [axes[0].plot([], [], MARKERS[i % len(MARKERS)], color=NEUTRAL, label=model)[0]
                    for i, model in enumerate(models)]
    handles += [axes[0].plot([], [], "o", color=NEUTRAL, label="passes every guard")[0],
                axes[0].plot([], [], "o", color=NEUTRAL, markerfacecolor="white", label="fails a guard")[0]]
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 7), fontsize="small")
    return save_figure(fig, path, metadata={POINTS_KEY: json.dumps(points)})


def chosen_title(found: dict[tuple[str, str], Verdict], models: list[str]) -> str:
    """`Chosen: targeted` (one model), `Chosen: gemma: targeted; bert: no run met the goal` (several),
    `No run met the goal` (none): only a run that passed every guard and lowered the headline is chosen."""
    chosen = {model: run for (run, model), verdict in found.items() if verdict.chosen}
    if not chosen:
        return "No run met the goal"
    if len(models) == 1:
        return f"Chosen: {chosen[models[0]]}"
    return "Chosen: " + "; ".join(f"{model}: {chosen.get(model, 'no run met the goal')}" for model in models)


def _read_back(container) -> dict:
    """The point and bar ends an errorbar call drew, read from its artists."""
    (x, y), = container.lines[0].get_xydata()
    (x_low, _), (x_high, _) = container.lines[2][0].get_segments()[0]
    (_, y_low), (_, y_high) = container.lines[2][1].get_segments()[0]
    return {"x": float(x), "y": float(y), "x_low": float(x_low), "x_high": float(x_high),
            "y_low": float(y_low), "y_high": float(y_high)}


def _shade_failing(ax, limit: tuple[str, float | None] | None) -> None:
    """Shade where a cost fails the judge: above a limit on a rise, below a limit on a fall."""
    if limit is None or limit[1] is None:
        return
    side, value = limit
    low, high = ax.get_xlim()
    margin = 0.2 * max(abs(value), high - low, 1.0)
    if side == "above":
        high = max(high, value + margin)
        ax.axvspan(value, high, color=FAIL_REGION, zorder=0, linewidth=0)
    else:
        low = min(low, value - margin)
        ax.axvspan(low, value, color=FAIL_REGION, zorder=0, linewidth=0)
    ax.set_xlim(low, high)
