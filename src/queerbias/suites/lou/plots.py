"""Lou figures: per-strategy forest plots (LM view, before/after) and the paper-style classifier panels.

Styling, sizes and saving come from `queerbias.report.plots`, so these figures match
the `queerbias compare` report.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from queerbias.report.plots import (
    FOREST_WIDTH_PX,
    NEUTRAL,
    PALETTE,
    forest_height_px,
    new_figure,
    save_figure,
)
from queerbias.suites.lou.data import ORIGINAL
from queerbias.suites.lou.lm_view import POOLED


def lm_plot(summary: dict, path: Path) -> Path:
    """Preference share and mean Δ per strategy with 95% intervals, one colour per task (pooled in black)."""
    scopes = [*summary["tasks"], POOLED]
    series = [(scope, summary[POOLED] if scope == POOLED else summary["tasks"][scope]) for scope in scopes]
    panels = (("preference", "ci_preference", 50.0, "reformulation preferred (% of instances)"),
              ("mean_delta", "ci_delta", 0.0, "mean Δ log-likelihood per token (reformulation − original)"))
    return _forest(series, panels, f"Lou, {summary['meta']['model']['spec']}: gender-fair reformulation vs. original",
                   path, filled=lambda entry, key: True)


COMPARE_PANELS = {  # per view: (value, interval, reference, x label, adjusted p) per panel
    "lm": (("change", "ci_change", 0.0, "change of Δ log-likelihood (positive: gap narrowed)", "p_delta_adj"),
           ("change_pref", "ci_pref", 0.0, "change of % preferring the reformulation (pp)", "p_pref_adj")),
    "classifier": (("change_flip", "ci_flip", 0.0, "change of label flips (pp; negative: more stable)", "p_flip_adj"),
                   ("change_acc", "ci_acc", 0.0, "change of accuracy on the reformulation (pp)", "p_acc_adj")),
}


def compare_plot(document: dict, path: Path) -> Path:
    """Change per strategy (after − before) with 95% intervals; filled marker: adjusted p < .05.

    One comparison: a colour per scope; several: a colour per AFTER run, on the pooled
    scope where there is one (LM view), else per AFTER run and task.
    """
    comparisons = document["comparisons"]
    if len(comparisons) == 1:
        series = list(comparisons[0]["scopes"].items())
    elif all(POOLED in c["scopes"] for c in comparisons):
        series = [(c["after"]["label"], c["scopes"][POOLED]) for c in comparisons]
    else:
        series = [(f"{c['after']['label']}: {scope}", entries) for c in comparisons for scope, entries in c["scopes"].items()]
    layout = COMPARE_PANELS[document["meta"].get("view", "lm")]
    panels = tuple(panel[:4] for panel in layout)
    tests = {panel[0]: panel[4] for panel in layout}

    def significant(entry: dict, key: str) -> bool:
        p = entry[tests[key]]
        return p is not None and p < 0.05

    title = f"Change against {comparisons[0]['before']['label']}: 95% bootstrap intervals; filled = adjusted p < .05"
    return _forest(series, panels, title, path, filled=significant)


def classifier_plot(summary: dict, path: Path) -> Path:
    """ΔF1, flip rate and Δcertainty per strategy, grouped by task (as the paper's Figures 3-4).

    ΔF1 and flip rate carry their 95% bootstrap intervals as error bars.
    """
    tasks = list(summary["tasks"])
    strategies = [s for s in next(iter(summary["tasks"].values())) if s != ORIGINAL]
    panels = (("delta_f1", "Δ macro-F1 (points)"), ("flip_rate", "label flips (% of instances)"),
              ("delta_certainty", "Δ certainty (mean max-softmax)"))
    intervals = {"delta_f1": "ci_delta_f1", "flip_rate": "ci_flip_rate"}
    fig, axes = new_figure((FOREST_WIDTH_PX, forest_height_px(len(strategies), len(tasks))), ncols=3, sharey=True)
    height = 0.8 / len(tasks)
    y = np.arange(len(strategies))
    for ax, (key, label) in zip(axes, panels, strict=True):
        for index, task in enumerate(tasks):
            entries = [summary["tasks"][task][s] for s in strategies]
            values = np.array([e[key] for e in entries])
            xerr = None
            if key in intervals:
                ci = np.array([e[intervals[key]] for e in entries]).T
                xerr = np.clip([values - ci[0], ci[1] - values], 0, None)
            ax.barh(y - 0.4 + height * (index + 0.5), values, height, color=PALETTE[index % len(PALETTE)],
                    xerr=xerr, error_kw={"ecolor": NEUTRAL, "capsize": 2, "linewidth": 1},
                    label=task if key == "delta_f1" else None)
        ax.axvline(0, color=NEUTRAL, linewidth=1)
        ax.set_xlabel(label)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(y, strategies)
    axes[0].set_ylim(len(strategies) - 0.5, -0.5)
    fig.suptitle(f"Lou, {summary['meta']['model']['spec']}: reformulated against original test instances")
    fig.legend(loc="outside lower center", ncols=min(len(tasks), 6), fontsize="small")
    return save_figure(fig, path)


def _forest(series: list[tuple[str, dict]], panels, title: str, path: Path, filled) -> Path:
    strategies = list(dict.fromkeys(s for _, entries in series for s in entries))
    fig, axes = new_figure((FOREST_WIDTH_PX, forest_height_px(len(strategies), len(series))), ncols=2, sharey=True)
    offsets = np.linspace(-0.25, 0.25, len(series)) if len(series) > 1 else np.zeros(1)
    for ax, (key, ci_key, reference, xlabel) in zip(axes, panels, strict=True):
        for index, (name, entries) in enumerate(series):
            colour = "#000000" if name == POOLED else PALETTE[index % len(PALETTE)]
            for row, strategy in enumerate(strategies):
                entry = entries.get(strategy)
                if entry is None or entry[key] is None:
                    continue
                y = row + offsets[index]
                ax.plot(entry[ci_key], [y, y], color=colour, linewidth=1.8)
                ax.plot(entry[key], y, "o", markersize=7, color=colour, markeredgewidth=1.6,
                        markerfacecolor=colour if filled(entry, key) else "white",
                        label=name if ax is axes[0] and row == _first_row(entries, strategies, key) else None)
        ax.axvline(reference, color=NEUTRAL, linewidth=1, linestyle="--", zorder=0)
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(range(len(strategies)), strategies)
    axes[0].set_ylim(len(strategies) - 0.5, -0.5)
    axes[0].set_ylabel("Strategy")
    fig.suptitle(title)
    fig.legend(loc="outside lower center", ncols=min(len(series), 6), fontsize="small")
    return save_figure(fig, path)


def _first_row(entries: dict, strategies: list[str], key: str) -> int | None:
    """The row whose marker carries the series' legend label (the first one drawn)."""
    return next((row for row, s in enumerate(strategies) if entries.get(s) and entries[s][key] is not None), None)
