"""The figures of a delta document: forest plot of the changes, levels before/after and the
checkpoint trajectory, drawn with `report.plots`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from queerbias.comparison.delta_tables import report_title
from queerbias.report.plots import (
    NEUTRAL,
    PALETTE,
    TRAJECTORY_PX,
    forest_figure,
    levels_panel,
    new_figure,
    save_figure,
)
from queerbias.suites.registry import get_suite


def forest_plot(document: dict, path: Path) -> Path:
    """Δ per entry of the first scope (Overall last) with bootstrap intervals, one panel per
    measure and one colour per AFTER run. Filled markers: adjusted p < .05; open: not significant.
    An entry that crossed the reference level is named so in its row (`crossings`)."""
    labels, series, panels, title, row_title = forest_parts(document)
    return save_figure(highlighted(forest_figure(labels, series, panels, title, row_title), labels,
                                   entries(document)), path)


def forest_parts(document: dict) -> tuple[list[str], list[tuple[str, list]], list[tuple], str, str]:
    """A delta document as `forest_figure`'s rows, series, panels (one per measure), title and y label."""
    comparisons = document["comparisons"]
    scope = document["scopes"][0] if document["scopes"] else None
    names = entries(document)
    rows = [[c.get(scope, {}).get(name) for name in names] + [c["overall"]] for c in comparisons]
    measures = [m for m in document["measures"] if f"delta_{m['name']}" in comparisons[0]["overall"]]
    labels = marked(names, crossings(document, comparisons)) + ["Overall"]
    panels = [(f"delta_{m['name']}", f"ci_{m['name']}", f"p_{m['name']}_adj",
               f"Δ {m['label']}" + (" (percentage points)" if m["unit"] == "pp" else "")) for m in measures]
    series = [(c["after"]["label"], entries) for c, entries in zip(comparisons, rows, strict=True)]
    title = (f"{report_title(document)}: change against {comparisons[0]['before']['label']}: 95% bootstrap "
             "intervals; filled marker = adjusted p < .05")
    return labels, series, panels, title, _scope_title(document, scope)


def crossings(document: dict, comparisons: list[dict]) -> dict[str, str]:
    """Entry of the first scope -> how its level passed the reference level of the first measure that says
    what lies above it (`Measure.above_reference`; pairs: the bias score and 50): "crossed 50 towards the
    stereotype", or "overshot past 50" where it fell from above the reference to below it, with ", not a
    gain" where it ended at least as far from the reference as it began (60 -> 0). The forest plot shows such
    a fall as a large negative change, the look of a gain, and the levels plot shows where it ended; both
    name it. With several AFTER runs, each note names the runs where it happened."""
    scope = document["scopes"][0] if document["scopes"] else None
    measure = next((m for m in document["measures"] if m.get("reference") is not None and m.get("above_reference")),
                   None)
    if scope is None or measure is None:
        return {}
    key, level = measure["name"], measure["reference"]
    found: dict[str, dict[str, list[str]]] = {}
    for comparison in comparisons:
        for name, entry in (comparison.get(scope) or {}).items():
            before, after = entry.get(f"{key}_before"), entry.get(f"{key}_after")
            if before is None or after is None:
                continue
            no_gain = ", not a gain" if abs(after - level) >= abs(before - level) else ""
            note = (f"crossed {level:g} towards {measure['above_reference']}" if before <= level < after
                    else f"overshot past {level:g}{no_gain}" if before > level > after else None)
            if note:
                found.setdefault(name, {}).setdefault(note, []).append(comparison["after"]["label"])
    return {name: "; ".join(note + (f" ({', '.join(runs)})" if len(comparisons) > 1 else "")
                            for note, runs in notes.items()) for name, notes in found.items()}


def marked(names: list[str], notes: dict[str, str]) -> list[str]:
    """Row labels with each entry's note from `crossings` after its name."""
    return [f"{name}: {notes[name]}" if name in notes else name for name in names]


def highlighted(fig: Figure, labels: list[str], names: list[str]) -> Figure:
    """The rows `marked` gave a note (where `labels`, the rows, differ from the entries' `names`) in the
    warning colour, so a crossing catches the eye before its words are read."""
    noted = {label for label, name in zip(labels, names, strict=False) if label != name}
    for label in fig.axes[0].get_yticklabels():
        if label.get_text() in noted:
            label.set_color(PALETTE[1])
    return fig


def entries(document: dict) -> list[str]:
    """The entries of the first scope, in the order the comparisons hold them (none without a scope)."""
    scope = document["scopes"][0] if document["scopes"] else None
    return list(dict.fromkeys(n for c in document["comparisons"] for n in c.get(scope, {}))) if scope else []


def levels_plot(document: dict, path: Path) -> Path | None:
    """`levels_figure` written to `path`; None (nothing written) where it has no panel."""
    fig = levels_figure(document)
    return None if fig is None else save_figure(fig, path)


def levels_figure(document: dict) -> Figure | None:
    """Each entry of the first scope before and after (the last comparison), one panel per
    measure that has a reference level (pairs: 50 = no preference); None without such a measure.

    A mitigation shows here, not in the forest plot: a group moving from 0 to 60 has a Δ of
    +60 and has come closer to 50, which only its levels tell.
    """
    last = document["comparisons"][-1]
    measures = [m for m in document["measures"]
                if m.get("reference") is not None and f"{m['name']}_before" in last["overall"]]
    if not measures:
        return None
    scope = document["scopes"][0] if document["scopes"] else None
    names = list(last.get(scope, {})) if scope else []
    row_title = _scope_title(document, scope)
    title = (f"{report_title(document)}: {last['before']['label']} → {last['after']['label']}, per "
             f"{row_title.lower() or 'entry'}")
    series = [(last["after"]["label"], [last[scope][name] for name in names] + [last["overall"]])]
    panels = [(measure, last["before"]["label"]) for measure in measures]
    labels = marked(names, crossings(document, [last])) + ["Overall"]
    return highlighted(forest_figure(labels, series, panels, title, row_title, draw=levels_panel), labels, names)


def _scope_title(document: dict, scope: str | None) -> str:
    if scope is None:
        return ""

    return get_suite(document["suite"]).scope_titles.get(scope, scope)


def trajectory_plot(document: dict, path: Path) -> Path:
    """Overall figures over training steps (bands: 95% intervals), perplexity beside."""
    rows = document["trajectory"]
    best = document.get("best") or {}
    measures = [m for m in document["measures"] if m["name"] in rows[0]]
    steps = np.array([r["step"] for r in rows], dtype=float)
    has_ppl = any(r["perplexity"] is not None for r in rows)
    fig, axes = new_figure(TRAJECTORY_PX, ncols=2 if has_ppl else 1)
    ax = axes[0]
    base = rows[0]
    for colour, m in zip(PALETTE, measures):
        name = m["name"]
        values = np.array([np.nan if r[name] is None else r[name] for r in rows], dtype=float)
        ax.plot(steps, values, "o-", color=colour, label=m["label"])
        bounds = [(base[name], base[name])] + [tuple(base[name] + v if v is not None else np.nan
                                                     for v in (r[f"ci_{name}"] or [None, None])) for r in rows[1:]]
        ax.fill_between(steps, [b[0] for b in bounds], [b[1] for b in bounds], color=colour, alpha=0.2, linewidth=0)
    for m in measures[:1]:
        if m.get("reference") is not None:
            ax.axhline(m["reference"], color=NEUTRAL, linestyle="--", linewidth=1, label=m["reference_label"])
    chosen = [r for r in rows if r["label"] == best.get("label")]
    if chosen:
        ax.plot(chosen[0]["step"], chosen[0][measures[0]["name"]], "*", markersize=16, color=PALETTE[2],
                label=f"best ({best['criterion']})", zorder=5)
    ax.set_xlabel("training step")
    ax.set_ylabel("overall figure")
    ax.set_title(f"{report_title(document)}: overall figures over training")
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
