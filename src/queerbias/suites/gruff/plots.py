"""Accuracy against the number of distractor sentences, one line per pronoun set.

Uses the report package's figure helpers and palette so GRUFF figures match the
other reports. Solid lines with filled markers are the first run of a panel (the
base model), dashed lines with open markers the second (a checkpoint).
"""

from __future__ import annotations

from pathlib import Path

from queerbias.report.plots import NEUTRAL, PALETTE, new_figure, save_figure
from queerbias.suites.gruff.forms import PRONOUN_SETS
from queerbias.suites.gruff.generation import SETTINGS

PANEL_PX = (560, 520)
STYLES = ("-", "--", ":", "-.")
CHANCE = 100 / len(PRONOUN_SETS)

#: one line set: (run label, the run's per-setting figures from summary.json)
Series = tuple[str, dict]


def accuracy_plot(panels: list[tuple[str, list[Series]]], path: Path) -> Path:
    """One panel per (title, series); x: no context, then 0-5 distractor sentences."""
    fig, axes = new_figure((PANEL_PX[0] * len(panels), PANEL_PX[1]), ncols=len(panels), sharey=True)
    ticks = list(range(len(SETTINGS)))
    labels = ["none" if s == "none" else s[1:] for s in SETTINGS]
    for ax, (title, series) in zip(axes, panels, strict=True):
        for index, (style, (run_label, settings)) in enumerate(zip(STYLES, series)):
            for colour, pronoun in zip(PALETTE, PRONOUN_SETS):
                points = [(x, settings[s]["by_pronoun"][pronoun]["accuracy"]) for x, s in zip(ticks, SETTINGS)
                          if s in settings and settings[s]["by_pronoun"][pronoun]["accuracy"] is not None]
                if points:
                    ax.plot(*zip(*points), marker="o", linestyle=style, color=colour,
                            markerfacecolor=colour if index == 0 else "white",
                            label=f"{pronoun} ({run_label})" if len(series) > 1 else pronoun)
        ax.axhline(CHANCE, color=NEUTRAL, linestyle=":", linewidth=1, label="chance (25%)")
        ax.set_xticks(ticks, labels)
        ax.set_xlabel("sentences about the distractor (none: no context)")
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
        ax.set_title(title, fontsize="medium")
        ax.legend(fontsize="x-small", ncols=len(series) + 1, loc="upper center", bbox_to_anchor=(0.5, -0.16))
    axes[0].set_ylabel("accuracy (%)")
    return save_figure(fig, path)
