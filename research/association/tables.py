"""The per-group table of a comparison on queerbias-de-shapes: d, c, the offset and the sign tests.

Read from a compare folder's delta.json and the two runs' summary.json (the base's and the candidate's),
so every figure printed is one the package wrote.
"""

from __future__ import annotations

import json
from pathlib import Path


def _fmt(value, digits: int = 2, signed: bool = False) -> str:
    return "–" if value is None else f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def group_table(compare: Path, before: Path, after: Path) -> str:
    """Markdown: per group the paper's bias score, the stereotype pairs' mean d, the association score and
    mean c, the offset (neutral d), before -> after, and the frame-level shift tests."""
    document = json.loads((compare / "delta.json").read_text(encoding="utf-8"))
    last = document["comparisons"][-1]
    shift, association = last["shift"], last["association"]
    runs = [json.loads((path / "summary.json").read_text(encoding="utf-8")) for path in (before, after)]
    lines = ["| group | frames | paper's bias score | stereotype d | association score | mean c | offset "
             "(neutral d) | Δd towards (p adj.) | Δc towards (p adj.) | Δ neutral d |",
             "|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for group, entry in runs[0]["association"]["groups"].items():
        a = runs[1]["association"]["groups"][group]
        test = shift["groups"][group]
        bias = [run["groups"][group]["bias_score"] for run in runs]
        cells = [f"{_fmt(bias[0], 1)} → {_fmt(bias[1], 1)}",
                 f"{_fmt(entry['d_stereotype'])} → {_fmt(a['d_stereotype'])}",
                 f"{_fmt(entry['score'], 1)} → {_fmt(a['score'], 1)}",
                 f"{_fmt(entry['mean_c'])} → {_fmt(a['mean_c'])}",
                 f"{_fmt(entry['offset'])} → {_fmt(a['offset'])}"]
        cells += [f"{test[m]['towards']}/{test[m]['towards'] + test[m]['away']} ({_fmt(test[m]['p_adj'], 3)})"
                  for m in ("d", "c")]
        cells.append(_fmt(test["d_neutral"]["delta"], 2, signed=True))
        lines.append(f"| {group} | {test['n_units']} | " + " | ".join(cells) + " |")
    overall = [run["association"]["overall"] for run in runs]
    lines += ["", f"Association excess {_fmt(association['excess_before'])} → {_fmt(association['excess_after'])} "
                  f"(change {_fmt(association['delta_excess'], signed=True)}, 95% CI "
                  f"[{_fmt(association['ci_excess'][0], signed=True)}, {_fmt(association['ci_excess'][1], signed=True)}]"
                  f"; coin-flip floor {_fmt(association['excess_floor'])}); association distance "
                  f"{_fmt(association['bias_before'])} → {_fmt(association['bias_after'])} (floor "
                  f"{_fmt(association['floor'])}); soft distance (mean |mean c|) {_fmt(association['soft_before'], 3)} → "
                  f"{_fmt(association['soft_after'], 3)} nats ({_fmt(-association['soft_shrink_pct'], 0, signed=True)}%). "
                  f"Shifted towards the stereotype (frame sign test, {shift['correction']}, corrected p < "
                  f"{shift['alpha']:g}): {', '.join(shift['shifted']) or 'none'}; largest |Δ neutral d| "
                  f"{_fmt(shift['neutral_moved_max'])} nats. Paper's stereotype excess "
                  f"{_fmt(runs[0]['direction']['stereotype_excess'])} → {_fmt(runs[1]['direction']['stereotype_excess'])}; "
                  f"groups above 50 by association: {', '.join(overall[0]['stereotypical_groups']) or 'none'} → "
                  f"{', '.join(overall[1]['stereotypical_groups']) or 'none'}."]
    return "\n".join(lines) + "\n"
