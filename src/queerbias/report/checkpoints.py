"""Training trajectories: overall scores over checkpoint steps and the best checkpoint.

The best checkpoint is chosen by a stated criterion among checkpoints whose held-out
perplexity stayed within a margin of the base model's, so a "debiased" checkpoint
that has simply stopped modelling language is never picked.
"""

from __future__ import annotations

#: description of each of `choices.BEST_CRITERIA`
CRITERIA = {
    "lowest": "lowest overall bias score",
    "closest50": "overall bias score closest to 50 (no preference between the sentences)",
}
MIN_CHECKPOINTS = 2


def trajectory(before, comparisons: list[dict]) -> list[dict] | None:
    """Rows base-then-checkpoints by step, or None with fewer than two AFTER runs carrying a step.

    Each row: label, step, bias, soft, deltas with intervals and p-values against the
    base (None on the base row), perplexity and its change in percent (None where a perplexity is missing).
    """
    steps = [c for c in comparisons if c["after"].get("step") is not None]
    if len(steps) < MIN_CHECKPOINTS:
        return None
    base_ppl = before.perplexity
    first = steps[0]["overall"]
    rows = [{
        "label": before.label, "step": before.step if before.step is not None else 0, "base": True,
        "bias": first["bias_before"], "soft": first["soft_before"],
        "delta_bias": None, "ci_bias": [None, None], "p_bias": None,
        "delta_soft": None, "ci_soft": [None, None], "p_soft": None,
        "perplexity": base_ppl, "ppl_change_pct": 0.0 if base_ppl is not None else None,
    }]
    for comparison in sorted(steps, key=lambda c: c["after"]["step"]):
        overall, after = comparison["overall"], comparison["after"]
        ppl = after.get("perplexity")
        rows.append({
            "label": after["label"], "step": after["step"], "base": False,
            "bias": overall["bias_after"], "soft": overall["soft_after"],
            **{key: overall[key] for key in ("delta_bias", "ci_bias", "p_bias", "delta_soft", "ci_soft", "p_soft")},
            "perplexity": ppl,
            "ppl_change_pct": 100.0 * (ppl / base_ppl - 1) if ppl is not None and base_ppl else None,
        })
    return rows


def choose_best(rows: list[dict], criterion: str, ppl_margin_pct: float) -> dict:
    """The checkpoint best under `criterion` among those within the perplexity margin.

    Ties go to the earlier step (less training). A checkpoint without a perplexity
    figure, or with a base lacking one, is not filtered.
    """
    if criterion not in CRITERIA:
        raise ValueError(f"unknown criterion {criterion!r}; expected one of {sorted(CRITERIA)}")
    distance = (lambda r: r["bias"]) if criterion == "lowest" else (lambda r: abs(r["bias"] - 50.0))
    eligible, excluded = [], []
    for row in rows:
        if row["base"]:
            continue
        change = row["ppl_change_pct"]
        if change is not None and change > ppl_margin_pct:
            excluded.append({"label": row["label"], "step": row["step"],
                             "reason": f"perplexity rose {change:.1f}% > {ppl_margin_pct:g}%"})
        else:
            eligible.append(row)
    best = min(eligible, key=lambda r: (distance(r), r["step"])) if eligible else None
    return {
        "criterion": criterion,
        "criterion_description": CRITERIA[criterion],
        "ppl_margin_pct": ppl_margin_pct,
        "label": best["label"] if best else None,
        "step": best["step"] if best else None,
        "bias": best["bias"] if best else None,
        "eligible": [r["label"] for r in eligible],
        "excluded": excluded,
    }
