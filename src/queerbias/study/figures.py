"""The study's figures: the change per group × model as a heatmap, the forest plot over seeds,
and the trade-off of a bias figure against perplexity per method.

Drawn with `report.plots`' figure helpers (outside pyplot, fixed pixel sizes, the
Okabe-Ito palette, atomic PNG writes); the heatmap's colours are a diverging map
centred on no change.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
from matplotlib import colormaps

from queerbias.report.plots import NEUTRAL, PALETTE, forest_figure, new_figure, save_figure
from queerbias.study.aggregate import Column, GroupTable, MethodRow
from queerbias.suites.protocol import OVERALL

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: purple (less) to orange (more), colour-blind safe; grey where a model and run lack seeds
DIVERGING = colormaps["PuOr_r"].with_extremes(bad="#dddddd")
CELL_PX, ROW_PX, MARGIN_PX = 130, 30, 230
TRADEOFF_PX, TRADEOFF_COLUMNS = (560, 480), 3


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
            text = "n/a" if np.isnan(value) else f"{value:+.{measure.get('digits', 2)}f}{marks.get((row, col), '')}"
            ax.text(col, row, text, ha="center", va="center", fontsize="small")
        ax.set_xticks(range(len(models)), models, rotation=20, ha="right")
        ax.set_yticks(range(len(table.entries)), _labels(table.entries))
        ax.axhline(len(table.entries) - 1.5, color=NEUTRAL, linewidth=0.8)
        ax.set_title(f"Δ {measure['label']}" + (" (pp)" if measure.get("unit") == "pp" else ""))
        fig.colorbar(image, ax=ax, shrink=0.8)
    fig.suptitle(f"{table.benchmark}, run {run}: change base → final, mean over seeds")
    return save_figure(fig, path)


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
            relative = [100.0 * (a - b) / b for a, b in zip(ppl.afters, ppl.befores, strict=True) if b]
            if len(relative) != ppl.seeds:
                continue
            x, y = statistics.fmean(relative), figure.delta
            ax.errorbar(x, y, xerr=_spread(relative, x), yerr=_spread(figure.deltas, y),
                        fmt=MARKERS[models.index(row.model) % len(MARKERS)], markersize=8,
                        color=PALETTE[runs.index(row.run) % len(PALETTE)], capsize=3, linewidth=1)
            drawn = True
        ax.axhline(0, color=NEUTRAL, linewidth=1, linestyle="--")
        ax.axvline(0, color=NEUTRAL, linewidth=1, linestyle="--")
        ax.set_xlabel(f"{'general' if general else 'in-domain'} perplexity change (%)")
        ax.set_ylabel(f"Δ {column.title.split(': ', 1)[-1]}")
        ax.grid(alpha=0.3)
    if not drawn:
        return None
    handles = [axes[0].plot([], [], "o", color=PALETTE[i % len(PALETTE)], label=run)[0] for i, run in enumerate(runs)]
    handles += [axes[0].plot([], [], MARKERS[i % len(MARKERS)], color=NEUTRAL, label=model)[0]
                for i, model in enumerate(models)]
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 6), fontsize="small")
    fig.suptitle(f"{columns[0].benchmark}: bias figures against perplexity, mean over seeds (bars: spread)")
    return save_figure(fig, path)


def _spread(values: list[float] | tuple[float, ...], centre: float) -> list[list[float]]:
    """Error bar lengths below and above: to min and max for 2 values, ± SD for 3 or more."""
    if len(values) == 2:
        return [[centre - min(values)], [max(values) - centre]]
    sd = statistics.stdev(values) if len(values) >= 3 else 0.0
    return [[sd], [sd]]

