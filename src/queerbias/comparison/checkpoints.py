"""Training trajectories: overall figures over checkpoint steps and the best checkpoint.

The best checkpoint is chosen by a stated criterion (each suite declares its own,
`Suite.criteria`) among checkpoints whose held-out perplexity stayed within a margin of
the base model's, so a "debiased" checkpoint that has simply stopped modelling language
is never picked.
"""

from __future__ import annotations

from queerbias.suites.protocol import Criterion
from queerbias.suites.registry import companion, get_declaration

#: AFTER runs carrying a step that make a trajectory in `queerbias compare`; a training run's own
#: report takes its only checkpoint too (`TRAINING_CHECKPOINTS`), as its verdict names what it chose
MIN_CHECKPOINTS, TRAINING_CHECKPOINTS = 2, 1
#: what a training run's guards say of it (`run_verdict`): every checkpoint refused; the last one refused
#: (its weights are the run's final/) and an earlier one not; the last one not refused; no guard evaluated
REFUSED, LAST_REFUSED, PASSED, UNGUARDED = "refused", "last refused", "passed", "unguarded"


def trajectory(before, comparisons: list[dict], measures: list[str], figures=(),
               minimum: int = MIN_CHECKPOINTS) -> list[dict] | None:
    """Rows base-then-checkpoints by step, or None with fewer than `minimum` AFTER runs carrying a step.

    Each row: label, step, base; per measure its overall value, then its delta, interval and p
    against the base (None on the base row); the same for each comparison-level figure
    (`<figure>_<measure>`, e.g. distance_bias); perplexity and its change in percent (None
    where a perplexity is missing).
    """
    steps = [c for c in comparisons if c["after"].get("step") is not None]
    if not steps or len(steps) < minimum:
        return None
    measures = [m for m in measures if f"delta_{m}" in steps[0]["overall"]]
    shaped = [(f, m) for f in figures if steps[0].get(f) for m in measures if f"delta_{m}" in steps[0][f]]
    base_ppl = before.perplexity
    rows = [{"label": before.label, "step": before.step if before.step is not None else 0, "base": True,
             **_figures(steps[0], measures, shaped, "before"),
             "perplexity": base_ppl, "ppl_change_pct": 0.0 if base_ppl is not None else None}]
    for comparison in sorted(steps, key=lambda c: c["after"]["step"]):
        after = comparison["after"]
        ppl = after.get("perplexity")
        rows.append({"label": after["label"], "step": after["step"], "base": False,
                     **_figures(comparison, measures, shaped, "after"), "perplexity": ppl,
                     "ppl_change_pct": 100.0 * (ppl / base_ppl - 1) if ppl is not None and base_ppl else None})
    return rows


def _figures(comparison: dict, measures: list[str], shaped: list[tuple[str, str]], side: str) -> dict:
    """The overall values, their changes, then each figure's value and change ("before": the base row,
    whose changes are None)."""
    def change(entry: dict, m: str, name: str) -> dict:
        if side == "before":
            return {f"delta_{name}": None, f"ci_{name}": [None, None], f"p_{name}": None}
        return {f"delta_{name}": entry.get(f"delta_{m}"), f"ci_{name}": entry.get(f"ci_{m}", [None, None]),
                f"p_{name}": entry.get(f"p_{m}")}

    overall = comparison["overall"]
    row = {m: overall[f"{m}_{side}"] for m in measures}
    for m in measures:
        row |= change(overall, m, m)
    for figure, m in shaped:
        entry = comparison.get(figure) or {}
        row[f"{figure}_{m}"] = entry.get(f"{m}_{side}")
        row |= change(entry, m, f"{figure}_{m}")
    return row


def guard_refusals(documents: dict[str, dict], guards: dict[str, float]) -> dict[int, str]:
    """Checkpoint steps no benchmark may choose, with why: those a guard benchmark (name -> allowance)
    refuses by its suite's rule (the training companion's `guard_refusal`: the knowledge set, its
    declared guard figure, accuracy, fell more than the allowance in points; a pair benchmark such
    as the validation frames, its stereotype excess rose more than the allowance or a group crossed
    50 towards the stereotype). A mitigation that
    forgets what the identity words mean, or pushes a group into the stereotype on frames it never
    trained on, is then not "best" on the bias benchmarks either."""
    refused: dict[int, str] = {}
    for name, allowed in guards.items():
        document = documents.get(name)
        if document is None:
            continue
        suite, hooks = get_declaration(document["suite"]), companion(document["suite"], "training")
        for comparison in document["comparisons"]:
            step = comparison["after"].get("step")
            reason = hooks.guard_refusal(suite, comparison, allowed) if step is not None else None
            if reason:
                refused.setdefault(step, f"{name}: {reason}")
    return refused


def run_verdict(documents: dict[str, dict], guards: dict[str, float], refused: dict[int, str]) -> dict:
    """What a training run's guards said, kept where people read it (every benchmark's delta.json,
    metrics.jsonl's last line, the model card), so a run whose guards refused it never reads as a
    mitigation: `status` (`REFUSED`, `LAST_REFUSED`, `PASSED`, `UNGUARDED`), the guards evaluated
    (benchmark -> allowance), the last step (whose weights are the run's final/), the checkpoint the
    first benchmark that chooses one chose (`chosen`: benchmark, label, step, criterion; None where
    none chooses) and `text`, the verdict in one sentence. `documents`: the run's delta documents by
    benchmark, their `best` settled; `refused`: `guard_refusals` of them."""
    steps = sorted({c["after"]["step"] for d in documents.values() for c in d["comparisons"]
                    if c["after"].get("step") is not None})
    evaluated = {name: allowed for name, allowed in guards.items() if name in documents}
    last = steps[-1] if steps else None
    status = (UNGUARDED if not evaluated or last is None else REFUSED if set(steps) <= set(refused)
              else LAST_REFUSED if last in refused else PASSED)
    named = "; ".join(f"step {step}: {why}" for step, why in sorted(refused.items()))
    passed = [step for step in steps if step not in refused]
    text = {
        REFUSED: f"refused by its guards: {named}; every checkpoint was refused, the last (step {last}, whose "
                 "weights are in final/) too, so this is not a mitigation to use",
        LAST_REFUSED: f"refused by its guards: {named}; the last checkpoint (step {last}, whose weights are in "
                      f"final/) was refused, so those weights are not a mitigation to use; "
                      f"{_steps(passed)} passed them",
        PASSED: f"passed its guards ({', '.join(evaluated)}) at the last checkpoint (step {last})"
                + (f"; they refused {named}" if refused else ""),
        UNGUARDED: "no guard benchmark judged the run: no checkpoint was refused",
    }[status]
    chosen = next(({"benchmark": name, **{key: d["best"][key] for key in ("label", "step", "criterion",
                                                                          "criterion_description")}}
                   for name, d in documents.items() if d.get("best")), None)
    return {"status": status, "text": text, "guards": evaluated, "last_step": last, "chosen": chosen}


def _steps(steps: list[int]) -> str:
    return ("step " if len(steps) == 1 else "steps ") + ", ".join(map(str, steps))


def choose_best(rows: list[dict], criterion: str, ppl_margin_pct: float, criteria: dict[str, Criterion],
                refused: dict[int, str] | None = None) -> dict:
    """The checkpoint best under `criterion` among those within the perplexity margin and not
    `refused` (step -> why: the criterion's own second figure, or a guard benchmark of the run).

    Ties go to the earlier step (less training). A checkpoint without a perplexity
    figure, or with a base lacking one, is not filtered.
    """
    refused = refused or {}
    if criterion not in criteria:
        raise ValueError(f"unknown criterion {criterion!r}; expected one of {sorted(criteria)}")
    rule = criteria[criterion]
    if any(row.get(key) is None for row in rows if not row["base"] for key in rule.reads):
        raise ValueError(f"criterion {criterion!r} needs {rule.needs or ', '.join(rule.reads)} of every checkpoint")
    eligible, excluded = [], []
    for row in rows:
        if row["base"]:
            continue
        change = row["ppl_change_pct"]
        if change is not None and change > ppl_margin_pct:
            excluded.append({"label": row["label"], "step": row["step"],
                             "reason": f"perplexity rose {change:.1f}% > {ppl_margin_pct:g}%"})
        elif row["step"] in refused:
            excluded.append({"label": row["label"], "step": row["step"], "reason": refused[row["step"]]})
        else:
            eligible.append(row)
    best = min(eligible, key=lambda r: (*rule.order(r), r["step"])) if eligible else None
    return {
        "criterion": criterion,
        "criterion_description": rule.description,
        "ppl_margin_pct": ppl_margin_pct,
        "label": best["label"] if best else None,
        "step": best["step"] if best else None,
        **{key: best[key] if best else None for key in rule.reads},
        "eligible": [r["label"] for r in eligible],
        "excluded": excluded,
    }
