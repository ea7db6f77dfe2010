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
    "distance": "lowest distance to indifference (mean over groups of |bias score - 50|; ties: soft)",
}
_NO_DISTANCE = {"distance_bias": None, "delta_distance_bias": None, "ci_distance_bias": [None, None],
                "p_distance_bias": None, "distance_soft": None, "delta_distance_soft": None,
                "ci_distance_soft": [None, None], "p_distance_soft": None}
MIN_CHECKPOINTS = 2


def trajectory(before, comparisons: list[dict]) -> list[dict] | None:
    """Rows base-then-checkpoints by step, or None with fewer than two AFTER runs carrying a step.

    Each row: label, step, bias, soft, distance to indifference (bias, soft), deltas with
    intervals and p-values against the base (None on the base row), perplexity and its
    change in percent (None where a perplexity is missing).
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
        **_NO_DISTANCE, **_distance_before(steps[0].get("distance")),
        "perplexity": base_ppl, "ppl_change_pct": 0.0 if base_ppl is not None else None,
    }]
    for comparison in sorted(steps, key=lambda c: c["after"]["step"]):
        overall, after = comparison["overall"], comparison["after"]
        ppl = after.get("perplexity")
        rows.append({
            "label": after["label"], "step": after["step"], "base": False,
            "bias": overall["bias_after"], "soft": overall["soft_after"],
            **{key: overall[key] for key in ("delta_bias", "ci_bias", "p_bias", "delta_soft", "ci_soft", "p_soft")},
            **_distance_after(comparison.get("distance")),
            "perplexity": ppl,
            "ppl_change_pct": 100.0 * (ppl / base_ppl - 1) if ppl is not None and base_ppl else None,
        })
    return rows


def _distance_before(distance: dict | None) -> dict:
    if not distance:
        return {}
    return {"distance_bias": distance["bias_before"], "distance_soft": distance["soft_before"]}


def _distance_after(distance: dict | None) -> dict:
    if not distance:
        return dict(_NO_DISTANCE)
    row = {}
    for name in ("bias", "soft"):
        row[f"distance_{name}"] = distance[f"{name}_after"]
        row[f"delta_distance_{name}"] = distance[f"delta_{name}"]
        row[f"ci_distance_{name}"] = distance[f"ci_{name}"]
        row[f"p_distance_{name}"] = distance[f"p_{name}"]
    return row


def choose_best(rows: list[dict], criterion: str, ppl_margin_pct: float) -> dict:
    """The checkpoint best under `criterion` among those within the perplexity margin.

    Ties go to the earlier step (less training). A checkpoint without a perplexity
    figure, or with a base lacking one, is not filtered.
    """
    if criterion not in CRITERIA:
        raise ValueError(f"unknown criterion {criterion!r}; expected one of {sorted(CRITERIA)}")
    if criterion == "distance" and any(r.get("distance_bias") is None for r in rows if not r["base"]):
        raise ValueError("criterion 'distance' needs the distance to indifference of every checkpoint")
    distance = {"lowest": lambda r: (r["bias"],), "closest50": lambda r: (abs(r["bias"] - 50.0),),
                "distance": lambda r: (r["distance_bias"], r["distance_soft"])}[criterion]
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
    best = min(eligible, key=lambda r: (*distance(r), r["step"])) if eligible else None
    return {
        "criterion": criterion,
        "criterion_description": CRITERIA[criterion],
        "ppl_margin_pct": ppl_margin_pct,
        "label": best["label"] if best else None,
        "step": best["step"] if best else None,
        "bias": best["bias"] if best else None,
        "distance_bias": best.get("distance_bias") if best else None,
        "eligible": [r["label"] for r in eligible],
        "excluded": excluded,
    }
