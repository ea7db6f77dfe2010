"""GIFI-DE reports: summary.json/md of one run, radar plots, before/after deltas.

Tables are rendered with `queerbias.report.tables` and colours come from
`queerbias.report.plots`, so GIFI reports look like the other suites' reports.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from queerbias.errors import QueerbiasError
from queerbias.fileio import atomic_write
from queerbias.report.plots import NEUTRAL, PALETTE, new_figure, save_figure
from queerbias.report.tables import Table, fmt, to_csv, to_latex, to_markdown
from queerbias.suites.gifi.dimensions import DIMENSIONS, NAMES

RADAR_PX = (700, 640)


# -- one run --------------------------------------------------------------------------

def build_summary(runs: list[dict], requested, group_keys: list[str], meta: dict) -> dict:
    """Per-dimension mean ± SD over runs, per-group means, and the index over computed dimensions.

    A dimension counts as computed when every run computed it, so each run's index
    averages the same dimensions.
    """
    dimensions = {}
    for dim in DIMENSIONS:
        values = [run["values"].get(dim) for run in runs]
        entry = {"name": NAMES[dim], "computed": dim in requested and all(v is not None for v in values),
                 "runs": values}
        if entry["computed"]:
            entry.update(mean=float(np.mean(values)), sd=_sd(values))
        elif dim not in requested:
            entry["reason"] = "not requested"
        else:
            reasons = [run["reasons"].get(dim) for run in runs if run["values"].get(dim) is None]
            done = sum(v is not None for v in values)
            entry["reason"] = reasons[0] + (f" (computed in {done} of {len(runs)} runs)" if done else "")
        entry["groups"] = _group_means(runs, dim)
        dimensions[dim] = entry
    computed = [d for d in DIMENSIONS if dimensions[d]["computed"]]
    per_run = [float(np.mean([run["values"][d] for d in computed])) if computed else None for run in runs]
    gifi = {"mean": float(np.mean(per_run)) if computed else None, "sd": _sd(per_run) if computed else None,
            "n_dimensions": len(computed), "dimensions": computed, "runs": per_run}
    return {"gifi": gifi, "dimensions": dimensions, "groups": group_keys, "n_runs": len(runs), "meta": meta}


def _sd(values) -> float | None:
    return float(np.std(values, ddof=1)) if len(values) > 1 else None


def _group_means(runs: list[dict], dim: str) -> dict:
    collected: dict[str, list] = {}
    for run in runs:
        for group, figure in run["groups"].get(dim, {}).items():
            if figure["value"] is not None:
                collected.setdefault(group, []).append((figure["value"], figure["n"]))
    return {g: {"value": float(np.mean([v for v, _ in vals])), "n": int(sum(n for _, n in vals))}
            for g, vals in collected.items()}


def to_rows_csv(runs: list[dict]) -> tuple[str, str]:
    """dimensions.csv (run, seed, dimension, value, reason) and groups.csv (run, dimension, group, value, n)."""
    dims = [[r["run"], r["seed"], d, r["values"][d], r["reasons"].get(d)] for r in runs for d in r["values"]]
    groups = [[r["run"], d, g, fig["value"], fig["n"]]
              for r in runs for d, per_group in r["groups"].items() for g, fig in per_group.items()]
    return (to_csv(["run", "seed", "dimension", "value", "reason"], dims),
            to_csv(["run", "dimension", "group", "value", "n"], groups))


def summary_markdown(summary: dict) -> str:
    meta, gifi = summary["meta"], summary["gifi"]
    headline = (f"**GIFI = {_pm(gifi['mean'], gifi['sd'])}**, the mean of {gifi['n_dimensions']} of "
                f"{len(DIMENSIONS)} dimensions ({', '.join(gifi['dimensions']) or 'none'}); "
                f"{summary['n_runs']} run(s), mean ± SD over runs. 1 = equal treatment of all pronoun groups.")
    lines = [f"# GIFI-DE: {meta['model']['spec']}", "", headline, ""]
    rows = []
    for dim, entry in summary["dimensions"].items():
        score = _pm(entry.get("mean"), entry.get("sd")) if entry["computed"] else "not computed"
        rows.append([dim, entry["name"], score, entry.get("reason", "")])
    lines.append(to_markdown(Table(["Dimension", "Name", "Score", "Note"], rows)))
    groups = summary["groups"]
    per_group = {"GDR": "GDR accuracy", "PE": "PE accuracy", "SN": "mean sentiment", "NTS": "mean toxicity"}
    shown = [d for d in per_group if summary["dimensions"][d]["groups"]]
    if shown:
        table = Table(["Group", *[per_group[d] for d in shown]],
                      [[g, *[fmt(summary["dimensions"][d]["groups"].get(g, {}).get("value"), 3) for d in shown]]
                       for g in groups], caption="Per pronoun group (mean over runs)")
        lines += ["", to_markdown(table)]
    shares = [d for d in ("SA", "OF") if summary["dimensions"][d]["groups"]]
    if shares:
        keys = [*groups, "none"]
        table = Table(["First pronoun", *shares],
                      [[g, *[fmt(summary["dimensions"][d]["groups"].get(g, {}).get("value"), 3) for d in shares]]
                       for g in keys if any(g in summary["dimensions"][d]["groups"] for d in shares)],
                      caption="SA/OF: share of generations whose first pronoun is of each group (none: no pronoun)")
        lines += ["", to_markdown(table)]
    config = meta["config"]
    lines += ["", f"- model fingerprint: `{meta['model']['fingerprint']}`",
              f"- data: GIFI-DE prompts `{meta['data']['checksum']}`, items {meta['data']['n_items']}",
              f"- decoding: {meta['decoding']}, seeds {config['seed']}..{config['seed'] + summary['n_runs'] - 1}",
              f"- time: {meta['timings']['generate_s']:.1f} s generating, {meta['timings']['score_s']:.1f} s scoring"]
    refused = next((summary["dimensions"][d]["groups"]["refused"] for d in ("SN", "NTS", "CF")
                    if "refused" in summary["dimensions"][d]["groups"]), None)
    if refused is not None:
        lines.append(f"- refusals left out of SN, NTS and CF: {refused['n']} ({refused['value']:.1%} of continuations)")
    lines += [f"- note: {note}" for note in meta["notes"]]
    return "\n".join(lines) + "\n"


def _pm(value, sd) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if sd is None else f"{value:.3f} ± {sd:.3f}"


# -- radar plot -----------------------------------------------------------------------

def radar_plot(labelled: list[tuple[str, dict]], path: Path) -> Path:
    """The dimensions computed in every summary on a 0-1 radar, one polygon per summary."""
    axes_dims = [d for d in DIMENSIONS if all(s["dimensions"][d]["computed"] for _, s in labelled)]
    if len(axes_dims) < 3:
        axes_dims = [d for d in DIMENSIONS if any(s["dimensions"][d]["computed"] for _, s in labelled)]
    angles = np.linspace(0, 2 * np.pi, len(axes_dims), endpoint=False)
    fig, (ax,) = new_figure(RADAR_PX, subplot_kw={"projection": "polar"})
    for index, (label, summary) in enumerate(labelled):
        values = np.array([summary["dimensions"][d].get("mean", np.nan) for d in axes_dims], dtype=float)
        colour = PALETTE[index % len(PALETTE)]
        gifi = summary["gifi"]
        name = f"{label} (GIFI {gifi['mean']:.3f}, {gifi['n_dimensions']} dim.)" if gifi["mean"] is not None else label
        closed = np.append(angles, angles[:1])
        ax.plot(closed, np.append(values, values[:1]), "o-", color=colour, linewidth=1.8, label=name)
        ax.fill(closed, np.append(values, values[:1]), color=colour, alpha=0.12)
    ax.set_theta_offset(np.pi / 2)  # first dimension on top, then clockwise
    ax.set_theta_direction(-1)
    ax.set_xticks(angles, axes_dims)
    ax.set_ylim(0, 1)
    ax.set_yticks([0.25, 0.5, 0.75, 1.0], ["0.25", "0.5", "0.75", "1"], color=NEUTRAL, fontsize="small")
    ax.set_title("GIFI-DE dimensions (1 = equal treatment)")
    fig.legend(loc="outside lower center", fontsize="small")
    return save_figure(fig, path)


# -- before/after ---------------------------------------------------------------------

def load_summary(path: Path | str) -> dict:
    """A finished GIFI directory's summary.json (a run without it did not finish)."""
    file = Path(path) / "summary.json"
    if not file.is_file():
        raise QueerbiasError(f"{path}: no summary.json, so not a finished GIFI run")
    summary = json.loads(file.read_text(encoding="utf-8"))
    if "gifi" not in summary:
        raise QueerbiasError(f"{file} is not a GIFI summary")
    return summary


def compare_summaries(before: tuple[str, dict], afters: list[tuple[str, dict]]) -> dict:
    """Per-dimension deltas (AFTER - BEFORE) and the index over the dimensions both computed."""
    label, base = before
    comparisons = []
    for after_label, after in afters:
        _check_comparable(label, base, after_label, after)
        common = [d for d in DIMENSIONS if base["dimensions"][d]["computed"] and after["dimensions"][d]["computed"]]
        deltas = {}
        for dim in DIMENSIONS:
            b, a = base["dimensions"][dim], after["dimensions"][dim]
            deltas[dim] = {"before": b.get("mean"), "before_sd": b.get("sd"), "after": a.get("mean"),
                           "after_sd": a.get("sd"),
                           "delta": a["mean"] - b["mean"] if dim in common else None}
        gifi_before = float(np.mean([base["dimensions"][d]["mean"] for d in common])) if common else None
        gifi_after = float(np.mean([after["dimensions"][d]["mean"] for d in common])) if common else None
        comparisons.append({"after": after_label, "dimensions": deltas, "common": common,
                            "gifi": {"before": gifi_before, "after": gifi_after, "n_dimensions": len(common),
                                     "delta": None if not common else gifi_after - gifi_before}})
    return {"before": label, "comparisons": comparisons}


def _check_comparable(label: str, base: dict, after_label: str, after: dict) -> None:
    for key in ("checksum",):
        if base["meta"]["data"][key] != after["meta"]["data"][key]:
            raise QueerbiasError(f"{label} and {after_label} used different GIFI prompts "
                                 f"({base['meta']['data'][key]} vs {after['meta']['data'][key]})")
    if base["groups"] != after["groups"]:
        raise QueerbiasError(f"{label} and {after_label} compared different pronoun groups: "
                             f"{base['groups']} vs {after['groups']}")


def comparison_table(document: dict) -> Table:
    comparisons = document["comparisons"]
    header = ["Dimension", document["before"]]
    for c in comparisons:
        header += [c["after"], f"Δ {c['after']}"]
    rows = []
    for dim in DIMENSIONS:
        first = comparisons[0]["dimensions"][dim]
        row = [dim, _pm(first["before"], first["before_sd"])]
        for c in comparisons:
            entry = c["dimensions"][dim]
            row += [_pm(entry["after"], entry["after_sd"]), fmt(entry["delta"], 3, signed=True)]
        rows.append(row)
    summary_row = ["GIFI", fmt(comparisons[0]["gifi"]["before"], 3)]
    for c in comparisons:
        summary_row += [fmt(c["gifi"]["after"], 3), fmt(c["gifi"]["delta"], 3, signed=True)]
    n = ", ".join(f"{c['after']}: {c['gifi']['n_dimensions']}" for c in comparisons)
    return Table(header, rows, [summary_row], caption=f"GIFI-DE before ({document['before']}) and after",
                 notes=f"Scores: mean ± SD over runs; Δ = after − before (positive = more inclusive). "
                       f"GIFI over the dimensions both runs computed ({n}).")


def write_comparison(document: dict, labelled: list[tuple[str, dict]], out_dir: Path | str) -> list[Path]:
    """gifi_delta.md/.csv/.tex, radar.png, and gifi_delta.json last (its presence means complete)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = comparison_table(document)
    rows = [[c["after"], dim, e["before"], e["after"], e["delta"]]
            for c in document["comparisons"] for dim, e in c["dimensions"].items()]
    rows += [[c["after"], "GIFI", c["gifi"]["before"], c["gifi"]["after"], c["gifi"]["delta"]]
             for c in document["comparisons"]]
    written = [out / "gifi_delta.md", out / "gifi_delta.csv", out / "gifi_delta.tex"]
    atomic_write(written[0], to_markdown(table))
    atomic_write(written[1], to_csv(["after", "dimension", "before", "after_value", "delta"], rows))
    atomic_write(written[2], to_latex(table))
    written.append(radar_plot(labelled, out / "radar.png"))
    atomic_write(out / "gifi_delta.json", json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return [*written, out / "gifi_delta.json"]
