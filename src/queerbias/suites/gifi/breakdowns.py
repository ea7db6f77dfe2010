"""GIFI's failure analysis (Shan, Diana & Zhou, ACL 2025, App. D) on annotated generation rows.

Pure functions on one suite run's rows (all runs), each figure a mean over runs:

- `gdr_outcomes` (App. D.1, Fig. D.8): every GDR continuation is *correct* (its first
  pronoun is of the prompted group), a *replacement* (of another group) or an *omission*
  (no pronoun of the groups). Name-only prompts expect no pronoun, so they have no
  omission and are left out (their accuracy is GDR's per-group figure).
- `accuracy_variance` (App. D.1: "pronoun recognition accuracy is inversely correlated
  with variance across runs"): per pronoun group its GDR accuracy, mean and SD over runs,
  and Spearman's rho between the two over the groups (the paper states the direction
  without a coefficient); None with fewer than 2 runs or 3 groups.
- `substitutions` (App. D.1, Fig. D.9): for each neopronoun group, the share of its GDR
  continuations whose first pronoun is of each other group. The paper's columns are
  he/she/they only, as no model produced another neopronoun; here every group is a column.
- `pe_consistency` (App. D.4, Fig. D.11): each PE problem, over its variants (one per
  group), in the paper's seven categories, counted per run. "Neutral" is singular
  *they*; German has no such group by default, so its categories are None then.
- `ambiguous_sie`: how many scored pronouns are a "sie" whose number stays open (a plural
  verb another subject may agree with, or no finite verb: `extractor.sie_number`), per
  dimension; not in the paper.

D.10 (pronouns by occupations' gender dominance) needs occupations labelled male- or
female-dominated; the GIFI-DE occupations are named by field and carry no such label.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from queerbias.report.paired_stats import spearman

OUTCOMES = ("correct", "replacement", "omission")
PE_CATEGORIES = {
    "binary_any": "binary pronoun correct (any)",
    "neutral_any": "neutral pronoun correct (any)",
    "neo_any": "neopronoun correct (any)",
    "all_correct": "fully consistent (all correct)",
    "all_wrong": "fully inconsistent (all wrong)",
    "binary_neutral_not_neo": "binary/neutral correct but neopronouns wrong",
    "binary_mismatch": "inconsistent binary (some but not all binary correct)",
}


def by_run(rows: list[dict], task: str) -> list[list[dict]]:
    """The rows of one task, split by run (in run order)."""
    runs: dict[int, list[dict]] = defaultdict(list)
    for row in rows:
        if row["task"] == task:
            runs[row["run"]].append(row)
    return [runs[run] for run in sorted(runs)]


def outcome(row: dict) -> str:
    """Correct, replacement or omission of one GDR continuation of a group with pronouns."""
    if row["detected"] is None:
        return "omission"
    return "correct" if row["detected"] == row["group"] else "replacement"


def gdr_outcomes(rows: list[dict], kinds: dict[str, str | None]) -> dict:
    """Fig. D.8: per group with pronouns and over all of them, the mean share over runs of each outcome."""
    pronoun_groups = [g for g, kind in kinds.items() if kind is not None]
    runs = by_run(rows, "gdr")

    def shares(select) -> dict | None:
        per_run = [[outcome(r) for r in run if select(r)] for run in runs]
        per_run = [o for o in per_run if o]
        if not per_run:
            return None
        return {**{name: float(np.mean([o.count(name) / len(o) for o in per_run])) for name in OUTCOMES},
                "n": sum(len(o) for o in per_run)}

    groups = {g: shares(lambda r, g=g: r["group"] == g) for g in pronoun_groups}
    return {"groups": {g: v for g, v in groups.items() if v is not None},
            "overall": shares(lambda r: r["group"] in pronoun_groups)}


def accuracy_variance(rows: list[dict], kinds: dict[str, str | None]) -> dict | None:
    """App. D.1: per pronoun group its GDR accuracy (mean over runs) and SD over runs (ddof 1), and
    Spearman's rho (`paired_stats.spearman`) of accuracy against SD over the groups."""
    runs = by_run(rows, "gdr")
    if len(runs) < 2:
        return None
    per_group = {}
    for group in (g for g, kind in kinds.items() if kind is not None):
        shares = [[bool(r["correct"]) for r in run if r["group"] == group] for run in runs]
        if all(shares):
            per_group[group] = [float(np.mean(s)) for s in shares]
    if len(per_group) < 3:
        return None
    groups = {g: {"accuracy": float(np.mean(v)), "sd": float(np.std(v, ddof=1))} for g, v in per_group.items()}
    return {"groups": groups, **spearman([e["accuracy"] for e in groups.values()],
                                         [e["sd"] for e in groups.values()]).to_dict()}


def substitutions(rows: list[dict], kinds: dict[str, str | None]) -> dict:
    """Fig. D.9: prompted neopronoun group -> {other group: mean share over runs of its continuations
    whose first pronoun is of that group}, with the number of continuations `n`."""
    detectable = [g for g, kind in kinds.items() if kind is not None]
    runs = by_run(rows, "gdr")
    result = {}
    for group in (g for g, kind in kinds.items() if kind == "neopronoun"):
        per_run = [[r["detected"] for r in run if r["group"] == group] for run in runs]
        per_run = [d for d in per_run if d]
        if per_run:
            result[group] = {"n": sum(len(d) for d in per_run),
                             **{other: float(np.mean([d.count(other) / len(d) for d in per_run]))
                                for other in detectable if other != group}}
    return result


def problem_categories(correct: dict[str, bool], kinds: dict[str, str | None]) -> dict[str, bool | None]:
    """Fig. D.11: the categories of one PE problem from its variants' correctness (group -> correct);
    a category about a kind of group that is absent is None."""
    def of(kind):
        return [correct[g] for g in correct if kinds.get(g) == kind]

    binary, neutral, neo = of("binary"), of("neutral"), of("neopronoun")
    values = list(correct.values())
    return {
        "binary_any": any(binary) if binary else None,
        "neutral_any": any(neutral) if neutral else None,
        "neo_any": any(neo) if neo else None,
        "all_correct": all(values),
        "all_wrong": not any(values),
        "binary_neutral_not_neo": (any(binary + neutral) and not any(neo)) if neo and binary + neutral else None,
        "binary_mismatch": (any(binary) and not all(binary)) if len(binary) > 1 else None,
    }


def pe_consistency(rows: list[dict], kinds: dict[str, str | None]) -> dict | None:
    """Fig. D.11: per category the number of PE problems in it, per run and as the mean over runs,
    and its share of the problems."""
    runs = by_run(rows, "pe")
    counted = []
    for run in runs:
        problems: dict[str, dict[str, bool]] = defaultdict(dict)
        for row in run:
            problems[row["template_id"]][row["group"]] = bool(row["correct"])
        counted.append([problem_categories(variants, kinds) for variants in problems.values()])
    if not counted or not counted[0]:
        return None
    n_problems = len(counted[0])
    categories = {}
    for name in PE_CATEGORIES:
        if counted[0][0][name] is None:
            categories[name] = None
            continue
        per_run = [sum(bool(p[name]) for p in problems) for problems in counted]
        categories[name] = {"per_run": per_run, "mean": float(np.mean(per_run)),
                            "share": float(np.mean(per_run)) / n_problems}
    return {"n_problems": n_problems, "categories": categories}


def ambiguous_sie(rows: list[dict]) -> dict:
    """Per dimension whose rows carry the flag (GDR, SA, OF): scored continuations whose first pronoun is
    an ambiguous "sie", `n` of `of` over all runs. Runs written before the flag existed give {}."""
    counts: dict[str, list[int]] = {}
    for row in rows:
        if row.get("ambiguous") is None:
            continue
        dim = "GDR" if row["task"] == "gdr" else "OF" if row["state"] == "occupation" else "SA"
        entry = counts.setdefault(dim, [0, 0])
        entry[0] += bool(row["ambiguous"])
        entry[1] += 1
    return {dim: {"n": n, "of": of, "share": n / of} for dim, (n, of) in counts.items()}


def breakdowns(rows: list[dict], kinds: dict[str, str | None]) -> dict:
    """Every App. D figure of a run that its rows allow (summary.json `breakdowns`)."""
    return {"gdr_outcomes": gdr_outcomes(rows, kinds), "substitutions": substitutions(rows, kinds),
            "pe_consistency": pe_consistency(rows, kinds), "ambiguous_sie": ambiguous_sie(rows),
            "accuracy_variance": accuracy_variance(rows, kinds)}


def change(before: dict, after: dict) -> dict:
    """The App. D figures of two runs of the same items side by side (`GifiSuite.extras`): for every
    share (GDR outcomes, substitutions) and PE category count, before, after and the change, and the
    D.1 correlation of each run."""
    def pairs(b, a) -> dict:
        if isinstance(b, dict) or isinstance(a, dict):
            b, a = b or {}, a or {}
            return {key: pairs(b.get(key), a.get(key)) for key in dict.fromkeys([*b, *a])
                    if key not in ("n", "per_run", "share")}
        return {"before": b, "after": a, "delta": None if b is None or a is None else a - b}

    pe = {name: pairs((before["pe_consistency"] or {}).get("categories", {}).get(name) or {},
                      (after["pe_consistency"] or {}).get("categories", {}).get(name) or {}).get("mean")
          for name in PE_CATEGORIES}
    return {"gdr_outcomes": pairs(before["gdr_outcomes"], after["gdr_outcomes"]),
            "substitutions": pairs(before["substitutions"], after["substitutions"]),
            "pe_consistency": {name: entry for name, entry in pe.items() if entry is not None},
            "accuracy_variance": {side: (run.get("accuracy_variance") or {}).get("rho")
                                  for side, run in (("before", before), ("after", after))}}
