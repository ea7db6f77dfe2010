"""The drawing of every figure: forest panels, levels before/after, bars, lines, radar with histograms.

Callers supply data (rows, series of values; the comparator's delta document is drawn
through these in `comparison.delta_plots`); the drawing lives here once.
Figures are made outside pyplot (no display needed; a notebook's backend is left alone),
in the Okabe-Ito colour-blind safe palette, with pixel sizes fixed by the content (rows,
panels), not by tight bounding boxes, so a figure's size is predictable. Figures are
written atomically.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

#: Okabe & Ito (2008), yellow last: it is faint on white
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
DPI = 100
FOREST_WIDTH_PX, FOREST_BASE_PX, FOREST_ROW_PX, FOREST_SERIES_PX = 1100, 170, 34, 14
TRAJECTORY_PX = (1100, 450)
PANEL_PX = (560, 520)
RADAR_PX = (700, 640)
HISTOGRAM_PX = (380, 640)
NEUTRAL = "#666666"
LINE_STYLES = ("-", "--", ":", "-.")


def forest_height_px(n_rows: int, n_series: int) -> int:
    """Forest plot height: fixed margins plus room per row, growing with the series per row."""
    return FOREST_BASE_PX + n_rows * (FOREST_ROW_PX + FOREST_SERIES_PX * (n_series - 1))


def levels_panel(ax, labels: list[str], series: list[tuple[str, list]], panel: tuple, summary_row: bool = True,
                 legend: bool = True) -> None:
    """One panel of the levels plot: per row an arrow from before (open) to after (filled),
    the measure's reference level dashed; `panel` is (measure, BEFORE's label)."""
    measure, before_label = panel
    (after_label, entries), = series
    name = measure["name"]
    for row, entry in enumerate(entries):
        before, after = entry.get(f"{name}_before"), entry.get(f"{name}_after")
        if before is None or after is None:
            continue
        ax.annotate("", xy=(after, row), xytext=(before, row),
                    arrowprops={"arrowstyle": "->", "color": PALETTE[0], "linewidth": 1.2})
        ax.plot(before, row, "o", markersize=7, color=NEUTRAL, markerfacecolor="white",
                label=before_label if legend and row == 0 else None)
        ax.plot(after, row, "o", markersize=7, color=PALETTE[0], label=after_label if legend and row == 0 else None)
    ax.axvline(measure["reference"], color=NEUTRAL, linewidth=1, linestyle="--", zorder=0,
               label=(measure["reference_label"] or None) if legend else None)
    if summary_row:
        ax.axhline(len(labels) - 1.5, color=NEUTRAL, linewidth=0.6)
    ax.set_xlabel(measure["label"] + (" (%)" if measure["unit"] == "pp" else ""))
    ax.grid(axis="x", alpha=0.3)


def forest(labels: list[str], series: list[tuple[str, list]], panels: list[tuple], title: str, path: Path,
           ylabel: str = "", summary_row: bool = True) -> Path:
    """`forest_figure` written to `path`."""
    return save_figure(forest_figure(labels, series, panels, title, ylabel, summary_row), path)


def forest_figure(labels: list[str], series: list[tuple[str, list]], panels: list[tuple], title: str,
                  ylabel: str = "", summary_row: bool = True, draw=None) -> Figure:
    """Rows `labels`; per series (name, one entry dict or None per row); per panel (value key,
    interval key, adjusted-p key or None, x label[, reference value, default 0]). With
    `summary_row` the last row (Overall) is set off by a line. `draw` draws one panel
    (default `forest_panel`; `levels_panel` for the levels plot); the first panel's labels
    make the legend."""
    fig, axes = new_figure((FOREST_WIDTH_PX, forest_height_px(len(labels), len(series))), ncols=len(panels),
                           sharey=True)
    for ax, panel in zip(axes, panels, strict=True):
        (draw or forest_panel)(ax, labels, series, panel, summary_row, legend=ax is axes[0])
    forest_rows(axes[0], labels, ylabel)
    fig.suptitle(title)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncols=min(len(handles), 6), fontsize="small")
    return fig


def forest_rows(ax, labels: list[str], ylabel: str = "") -> None:
    """The rows of a forest plot, first at the top, on the axes that shows their names."""
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.set_ylabel(ylabel)


def forest_panel(ax, labels: list[str], series: list[tuple[str, list]], panel: tuple, summary_row: bool = True,
                 legend: bool = True) -> None:
    """One panel of a forest plot on `ax` (the rows' ticks are the caller's: panels share them)."""
    key, ci_key, p_key, xlabel, *reference = panel
    offsets = np.linspace(-0.25, 0.25, len(series)) if len(series) > 1 else np.zeros(1)
    for index, (name, entries) in enumerate(series):
        colour = PALETTE[index % len(PALETTE)]
        drawn = False
        for row, entry in enumerate(entries):
            if entry is None or entry.get(key) is None:
                continue
            y = row + offsets[index]
            low, high = entry[ci_key] if entry.get(ci_key) else (None, None)
            if low is not None and high is not None:
                ax.plot([low, high], [y, y], color=colour, linewidth=1.8)
            p = entry.get(p_key) if p_key else None
            ax.plot(entry[key], y, "o", markersize=7, color=colour, markeredgewidth=1.6,
                    markerfacecolor=colour if p is not None and p < 0.05 else "white",
                    label=name if legend and not drawn else None)
            drawn = True
    ax.axvline(reference[0] if reference else 0.0, color=NEUTRAL, linewidth=1, linestyle="--", zorder=0)
    if summary_row:
        ax.axhline(len(labels) - 1.5, color=NEUTRAL, linewidth=0.6)
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", alpha=0.3)


def hbar_panels(categories: list[str], series: list[tuple[str, dict]], panels: list[tuple[str, str, str | None]],
                title: str, path: Path) -> Path:
    """Horizontal bars per category, one colour per series, one panel per (key, x label, interval key).

    `series` is (name, {category: {key: value, interval key: [low, high]}}).
    """
    fig, axes = new_figure((FOREST_WIDTH_PX, forest_height_px(len(categories), len(series))), ncols=len(panels),
                           sharey=True)
    height = 0.8 / len(series)
    y = np.arange(len(categories))
    for ax, (key, label, ci_key) in zip(axes, panels, strict=True):
        for index, (name, entries) in enumerate(series):
            values = np.array([entries[c][key] if entries.get(c) and entries[c].get(key) is not None else np.nan
                               for c in categories], dtype=float)
            xerr = None
            if ci_key:
                ci = np.array([entries[c][ci_key] if entries.get(c) and entries[c].get(ci_key) else [np.nan, np.nan]
                               for c in categories], dtype=float).T
                xerr = np.clip(np.nan_to_num([values - ci[0], ci[1] - values]), 0, None)
            ax.barh(y - 0.4 + height * (index + 0.5), values, height, color=PALETTE[index % len(PALETTE)],
                    xerr=xerr, error_kw={"ecolor": NEUTRAL, "capsize": 2, "linewidth": 1},
                    label=name if ax is axes[0] else None)
        ax.axvline(0, color=NEUTRAL, linewidth=1)
        ax.set_xlabel(label)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(y, categories)
    axes[0].set_ylim(len(categories) - 0.5, -0.5)
    fig.suptitle(title)
    fig.legend(loc="outside lower center", ncols=min(len(series), 6), fontsize="small")
    return save_figure(fig, path)


def line_panels(ticks: list[str], panels: list[tuple[str, list[tuple[str, dict[str, list]]]]], path: Path,
                xlabel: str, ylabel: str, reference: tuple[float, str] | None = None,
                ylim: tuple[float, float] | None = None) -> Path:
    """One panel per (title, runs); per run (label, {line name: one value or None per tick}).

    The first run of a panel is drawn solid with filled markers, later runs dashed with open ones.
    """
    fig, axes = new_figure((PANEL_PX[0] * len(panels), PANEL_PX[1]), ncols=len(panels), sharey=True)
    x = list(range(len(ticks)))
    for ax, (title, runs) in zip(axes, panels, strict=True):
        for index, (style, (run_label, lines)) in enumerate(zip(LINE_STYLES, runs)):
            for colour, (line, values) in zip(PALETTE, lines.items()):
                points = [(i, v) for i, v in zip(x, values) if v is not None]
                if points:
                    ax.plot(*zip(*points), marker="o", linestyle=style, color=colour,
                            markerfacecolor=colour if index == 0 else "white",
                            label=f"{line} ({run_label})" if len(runs) > 1 else line)
        if reference is not None:
            ax.axhline(reference[0], color=NEUTRAL, linestyle=":", linewidth=1, label=reference[1])
        ax.set_xticks(x, ticks)
        ax.set_xlabel(xlabel)
        if ylim:
            ax.set_ylim(*ylim)
        ax.grid(alpha=0.3)
        ax.set_title(title, fontsize="medium")
        ax.legend(fontsize="x-small", ncols=len(runs) + 1, loc="upper center", bbox_to_anchor=(0.5, -0.16))
    axes[0].set_ylabel(ylabel)
    return save_figure(fig, path)


def radar_plot(series: list[tuple[str, dict[str, float | None]]], path: Path, title: str,
               histograms: list[tuple[str, dict]] = ()) -> Path:
    """Values in [0, 1] on a radar, one polygon per (label, {axis: value}); axes in the first series' order.

    Axes every series has are drawn; with fewer than three of those, every axis any series has.
    `histograms`: (title, {"edges", "counts"}) panels beside the radar, one per distribution whose bars
    the radar's figures summarise.
    """
    axes_names = [a for a in series[0][1] if all(values.get(a) is not None for _, values in series)]
    if len(axes_names) < 3:
        axes_names = [a for a in series[0][1] if any(values.get(a) is not None for _, values in series)]
    angles = np.linspace(0, 2 * np.pi, len(axes_names), endpoint=False)
    panels = 1 + len(histograms)
    fig = Figure(figsize=((RADAR_PX[0] + HISTOGRAM_PX[0] * len(histograms)) / DPI, RADAR_PX[1] / DPI), dpi=DPI,
                 layout="constrained")
    ax = fig.add_subplot(1, panels, 1, projection="polar")
    for index, (label, values) in enumerate(series):
        points = np.array([np.nan if values.get(a) is None else values[a] for a in axes_names], dtype=float)
        colour = PALETTE[index % len(PALETTE)]
        closed = np.append(angles, angles[:1])
        ax.plot(closed, np.append(points, points[:1]), "o-", color=colour, linewidth=1.8, label=label)
        ax.fill(closed, np.append(points, points[:1]), color=colour, alpha=0.12)
    ax.set_theta_offset(np.pi / 2)  # first axis on top, then clockwise
    ax.set_theta_direction(-1)
    ax.set_xticks(angles, axes_names)
    ax.set_ylim(0, 1)
    ax.set_yticks([0.25, 0.5, 0.75, 1.0], ["0.25", "0.5", "0.75", "1"], color=NEUTRAL, fontsize="small")
    ax.set_title(title)
    for position, (name, histogram) in enumerate(histograms, start=2):
        panel = fig.add_subplot(1, panels, position)
        edges = np.asarray(histogram["edges"], dtype=float)
        panel.bar(edges[:-1], histogram["counts"], width=np.diff(edges), align="edge", color=PALETTE[0],
                  edgecolor="white")
        panel.set_title(name, fontsize="medium")
        panel.set_ylabel("count")
        panel.grid(alpha=0.3)
    fig.legend(loc="outside lower center", fontsize="small")
    return save_figure(fig, path)


def new_figure(size_px: tuple[int, int], **subplots):
    """A figure outside pyplot: no backend is chosen or changed (a notebook keeps its own) and
    nothing is kept alive after the figure is dropped."""
    fig = Figure(figsize=(size_px[0] / DPI, size_px[1] / DPI), dpi=DPI, layout="constrained")
    return fig, fig.subplots(squeeze=False, **subplots).ravel()


def save_figure(fig, path: Path, metadata: dict[str, str] | None = None) -> Path:
    """Write the PNG via a temporary file, so a crash never leaves a truncated image; `metadata`
    goes into its text chunks."""
    path = Path(path)
    tmp = path.with_name(f".{path.stem}.tmp{path.suffix}")
    fig.savefig(tmp, dpi=DPI, metadata=metadata)
    os.replace(tmp, path)
    return path
