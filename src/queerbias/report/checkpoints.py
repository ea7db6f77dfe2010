"""Training trajectories: overall figures over checkpoint steps and the best checkpoint.

The best checkpoint is chosen by a stated criterion (each suite declares its own; the
bias criteria of the pair benchmark are here) among checkpoints whose held-out
perplexity stayed within a margin of the base model's, so a "debiased" checkpoint
that has simply stopped modelling language is never picked.
"""

from __future__ import annotations

from queerbias.suites.protocol import Criterion

#: the pair benchmark's criteria (`choices.BEST_CRITERIA`), on the overall bias score
CRITERIA = {
    "closest50": Criterion("overall bias score closest to 50 (no preference between the sentences)", "bias",
                           lambda value: abs(value - 50.0)),
    "lowest": Criterion("lowest overall bias score", "bias", lambda value: value),
}
MIN_CHECKPOINTS = 2


def trajectory(before, comparisons: list[dict], measures: list[str]) -> list[dict] | None:
    """Rows base-then-checkpoints by step, or None with fewer than two AFTER runs carrying a step.

    Each row: label, step, base, per measure its overall value, delta, interval and p against
    the base (None on the base row), perplexity and its change in percent (None where a
    perplexity is missing).
    """
    steps = [c for c in comparisons if c["after"].get("step") is not None]
    if len(steps) < MIN_CHECKPOINTS:
        return None
    measures = [m for m in measures if f"delta_{m}" in steps[0]["overall"]]
    base_ppl = before.perplexity
    first = steps[0]["overall"]
    rows = [{"label": before.label, "step": before.step if before.step is not None else 0, "base": True,
             **{m: first[f"{m}_before"] for m in measures},
             **{key: value for m in measures for key, value in ((f"delta_{m}", None), (f"ci_{m}", [None, None]),
                                                                (f"p_{m}", None))},
             "perplexity": base_ppl, "ppl_change_pct": 0.0 if base_ppl is not None else None}]
    for comparison in sorted(steps, key=lambda c: c["after"]["step"]):
        overall, after = comparison["overall"], comparison["after"]
        ppl = after.get("perplexity")
        rows.append({
            "label": after["label"], "step": after["step"], "base": False,
            **{m: overall[f"{m}_after"] for m in measures},
            **{key: overall[key] for m in measures for key in (f"delta_{m}", f"ci_{m}", f"p_{m}")},
            "perplexity": ppl,
            "ppl_change_pct": 100.0 * (ppl / base_ppl - 1) if ppl is not None and base_ppl else None,
        })
    return rows


def choose_best(rows: list[dict], criterion: str, ppl_margin_pct: float,
                criteria: dict[str, Criterion] = CRITERIA) -> dict:
    """The checkpoint best under `criterion` among those within the perplexity margin.

    Ties go to the earlier step (less training). A checkpoint without a perplexity
    figure, or with a base lacking one, is not filtered.
    """
    if criterion not in criteria:
        raise ValueError(f"unknown criterion {criterion!r}; expected one of {sorted(criteria)}")
    rule = criteria[criterion]
    eligible, excluded = [], []
    for row in rows:
        if row["base"]:
            continue
        change = row["ppl_change_pct"]
        if change is not None and change > ppl_margin_pct:
            excluded.append({"label": row["label"], "step": row["step"],
                             "reason": f"perplexity rose {change:.1f}% > {ppl_margin_pct:g}%"})
        elif row.get(rule.measure) is not None:
            eligible.append(row)
    best = min(eligible, key=lambda r: (rule.distance(r[rule.measure]), r["step"])) if eligible else None
    return {
        "criterion": criterion,
        "criterion_description": rule.description,
        "measure": rule.measure,
        "ppl_margin_pct": ppl_margin_pct,
        "label": best["label"] if best else None,
        "step": best["step"] if best else None,
        rule.measure: best[rule.measure] if best else None,
        "eligible": [r["label"] for r in eligible],
        "excluded": excluded,
    }
