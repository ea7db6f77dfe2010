"""Figures for reports: forest plot of deltas, checkpoint trajectory, score bars.

Matplotlib's Agg backend (no display needed), the Okabe-Ito colour-blind safe palette,
and pixel sizes fixed by the content (rows, panels), not by tight bounding boxes, so
a figure's size is predictable.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (backend must be chosen first)
import numpy as np  # noqa: E402

#: Okabe & Ito (2008), yellow last: it is faint on white
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
DPI = 100
FOREST_WIDTH_PX, FOREST_BASE_PX, FOREST_ROW_PX, FOREST_SERIES_PX = 1100, 170, 34, 14
TRAJECTORY_PX = (1100, 450)
SCORES_PX = (1100, 800)
NEUTRAL = "#666666"


def forest_height_px(n_rows: int, n_series: int) -> int:
    """Forest plot height: fixed margins plus room per row, growing with the series per row."""
    return FOREST_BASE_PX + n_rows * (FOREST_ROW_PX + FOREST_SERIES_PX * (n_series - 1))


def forest_plot(document: dict, path: Path) -> Path:
    """Δbias and Δsoft per identity (Overall last) with bootstrap intervals, one colour per AFTER run.

    Filled markers: adjusted p < .05 for that delta's test; open markers: not significant.
    """
    comparisons = document["comparisons"]
    names = sorted({group for c in comparisons for group in c["groups"]}) + ["Overall"]
    fig, axes = new_figure((FOREST_WIDTH_PX, forest_height_px(len(names), len(comparisons))), ncols=2, sharey=True)
    offsets = np.linspace(-0.25, 0.25, len(comparisons)) if len(comparisons) > 1 else np.zeros(1)
    for ax, test, xlabel in ((axes[0], "bias", "Δ bias score (percentage points)"),
                             (axes[1], "soft", "Δ soft score (percentage points)")):
        for index, comparison in enumerate(comparisons):
            entries = [comparison["groups"].get(name) for name in names[:-1]] + [comparison["overall"]]
            colour = PALETTE[index % len(PALETTE)]
            for row, entry in enumerate(entries):
                if entry is None:
                    continue
                y = row + offsets[index]
                low, high = entry[f"ci_{test}"]
                delta = entry[f"delta_{test}"]
                ax.plot([low, high], [y, y], color=colour, linewidth=1.8)
                significant = entry[f"p_{test}_adj"] is not None and entry[f"p_{test}_adj"] < 0.05
                ax.plot(delta, y, "o", markersize=7, color=colour, markeredgewidth=1.6,
                        markerfacecolor=colour if significant else "white",
                        label=comparison["after"]["label"] if test == "bias" and row == len(entries) - 1 else None)
        ax.axvline(0, color=NEUTRAL, linewidth=1, linestyle="--", zorder=0)
        ax.axhline(len(names) - 1.5, color=NEUTRAL, linewidth=0.6)
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(range(len(names)), names)
    axes[0].set_ylim(len(names) - 0.5, -0.5)
    axes[0].set_ylabel("Identity group")
    before = comparisons[0]["before"]["label"]
    fig.suptitle(f"Change against {before}: 95% bootstrap intervals; filled marker = adjusted p < .05")
    fig.legend(loc="outside lower center", ncols=min(len(comparisons), 6), fontsize="small")
    return save_figure(fig, path)


def trajectory_plot(document: dict, path: Path) -> Path:
    """Overall bias and soft score over training steps (bands: 95% intervals), perplexity beside."""
    rows = document["trajectory"]
    best = document.get("best") or {}
    steps = np.array([r["step"] for r in rows], dtype=float)
    has_ppl = any(r["perplexity"] is not None for r in rows)
    fig, axes = new_figure(TRAJECTORY_PX, ncols=2 if has_ppl else 1)
    ax = axes[0]
    base = rows[0]
    for colour, test, name in ((PALETTE[0], "bias", "bias score"), (PALETTE[1], "soft", "soft score")):
        values = np.array([r[test] for r in rows])
        ax.plot(steps, values, "o-", color=colour, label=name)
        low = [base[test]] + [base[test] + r[f"ci_{test}"][0] for r in rows[1:]]
        high = [base[test]] + [base[test] + r[f"ci_{test}"][1] for r in rows[1:]]
        ax.fill_between(steps, low, high, color=colour, alpha=0.2, linewidth=0)
    ax.axhline(50, color=NEUTRAL, linestyle="--", linewidth=1, label="50 = no preference")
    chosen = [r for r in rows if r["label"] == best.get("label")]
    if chosen:
        ax.plot(chosen[0]["step"], chosen[0]["bias"], "*", markersize=16, color=PALETTE[2],
                label=f"best ({best['criterion']})", zorder=5)
    ax.set_xlabel("training step")
    ax.set_ylabel("overall score")
    ax.set_title("Overall scores over training")
    ax.legend(fontsize="small")
    if has_ppl:
        measured = [(r["step"], r["perplexity"]) for r in rows if r["perplexity"] is not None]
        axes[1].plot(*zip(*measured), "o-", color=PALETTE[3], label="held-out perplexity")
        if base["perplexity"] is not None:
            limit = base["perplexity"] * (1 + best.get("ppl_margin_pct", 0.0) / 100)
            axes[1].axhline(limit, color=NEUTRAL, linestyle="--", linewidth=1,
                            label=f"base + {best.get('ppl_margin_pct', 0.0):g}%")
        axes[1].set_xlabel("training step")
        axes[1].set_ylabel("perplexity")
        axes[1].set_title("Language modelling quality")
        axes[1].legend(fontsize="small")
    return save_figure(fig, path)


def scores_plot(labels: list[str], groups: list[str], scores: dict, path: Path) -> Path:
    """Grouped bars of bias and soft score ± SE per group and model, drawn from 50 (no preference).

    Bars start at 50 so the direction of a preference is read at a glance and the axis
    zooms on the range the scores actually span.

    `scores[metric][label][group]` is a (score, se, ...) tuple or absent; metric is "bias" or "soft".
    """
    fig, axes = new_figure(SCORES_PX, nrows=2, sharex=True)
    x = np.arange(len(groups))
    width = 0.8 / len(labels)
    for ax, metric in zip(axes, ("bias", "soft"), strict=True):
        for index, label in enumerate(labels):
            values = np.array([scores[metric][label].get(group, (np.nan, np.nan))[:2] for group in groups],
                              dtype=float)
            ax.bar(x - 0.4 + width * (index + 0.5), values[:, 0] - 50, width, bottom=50, yerr=values[:, 1],
                   color=PALETTE[index % len(PALETTE)], label=label if metric == "bias" else None,
                   capsize=2, error_kw={"linewidth": 0.8})
        ax.axhline(50, color=NEUTRAL, linewidth=1)
        ax.set_ylabel(f"{metric} score (50 = no preference)")
        ax.grid(axis="y", alpha=0.3)
    fig.legend(loc="outside lower center", ncols=min(len(labels), 6), fontsize="small")
    axes[1].set_xticks(x, groups, rotation=30, ha="right")
    axes[1].set_xlabel("Identity group")
    fig.suptitle("Bias and soft score per identity group (± standard error)")
    return save_figure(fig, path)


def new_figure(size_px: tuple[int, int], **subplots):
    fig, axes = plt.subplots(figsize=(size_px[0] / DPI, size_px[1] / DPI), dpi=DPI, squeeze=False,
                             layout="constrained", **subplots)
    return fig, axes.ravel()


def save_figure(fig, path: Path) -> Path:
    """Write the PNG via a temporary file, so a crash never leaves a truncated image."""
    path = Path(path)
    tmp = path.with_name(f".{path.stem}.tmp{path.suffix}")
    fig.savefig(tmp, dpi=DPI)
    plt.close(fig)
    os.replace(tmp, path)
    return path
