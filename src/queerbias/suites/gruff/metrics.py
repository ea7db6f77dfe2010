"""GRUFF figures from scored items: accuracies, distractor errors, over-resolution, tests.

Input is the items table (one row per instance, as in items.csv). Accuracies are
percentages with their binomial standard error. Following the paper, correlations
(Spearman) and pronoun-set differences (Wilcoxon signed-rank) are computed over
occupations, from per-occupation accuracies, and Bonferroni-corrected within each
family of tests.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd

from queerbias.report.paired_stats import bonferroni, spearman, wilcoxon_signed_rank
from queerbias.suites.gruff.forms import CASES, PRONOUN_SETS, SYSTEMS
from queerbias.suites.gruff.generation import SETTINGS

BREAKDOWNS = {"by_pronoun": ("target", PRONOUN_SETS), "by_case": ("case", CASES), "by_system": ("system", SYSTEMS)}
BINARY = ("er", "sie")


def accuracy(correct) -> dict:
    """n, accuracy (%) and its binomial standard error (percentage points)."""
    values = np.asarray(correct, dtype=float)
    n = len(values)
    if n == 0:
        return {"n": 0, "accuracy": None, "se": None}
    p = values.mean()
    return {"n": n, "accuracy": 100 * p, "se": 100 * math.sqrt(p * (1 - p) / n)}


def setting_figures(items: pd.DataFrame) -> dict:
    """Accuracy overall and by pronoun set, case and noun system, plus distractor errors."""
    figures = accuracy(items["correct"])
    for name, (column, levels) in BREAKDOWNS.items():
        figures[name] = {level: accuracy(items.loc[items[column] == level, "correct"]) for level in levels}
    errors = items[~items["correct"]]
    with_distractor = errors[errors["distractor"].fillna("") != ""]
    figures["errors"] = len(errors)
    figures["distractor_errors"] = (100 * float((with_distractor["answer"] == with_distractor["distractor"]).mean())
                                    if len(with_distractor) else None)
    figures["ties"] = int(items["tie"].sum())
    return figures


def by_setting(items: pd.DataFrame) -> dict:
    return {s: setting_figures(items[items["setting"] == s]) for s in SETTINGS if (items["setting"] == s).any()}


def over_resolution(items: pd.DataFrame) -> dict:
    """Per occupation, how often er (sie) is chosen when the referent's pronoun is another.

    Sorted strongest pull first; `excess` is the rate minus the mean over occupations,
    so an occupation pulled towards er more than the model's general er preference
    stands out.
    """
    result = {}
    for pulled in BINARY:
        others = items[items["target"] != pulled]
        rates = (others["answer"] == pulled).groupby(others["occupation"]).mean().mul(100)
        counts = others.groupby("occupation").size()
        mean = float(rates.mean()) if len(rates) else 0.0
        rows = [{"occupation": occ, "rate": float(rate), "excess": float(rate) - mean, "n": int(counts[occ])}
                for occ, rate in rates.items()]
        result[pulled] = sorted(rows, key=lambda r: (-r["rate"], r["occupation"]))
    return result


def occupation_accuracy(items: pd.DataFrame, column: str | None = None) -> pd.DataFrame:
    """Accuracy (%) per occupation, one column per level of `column` (or one column 'all')."""
    if column is None:
        return items.groupby("occupation")["correct"].mean().mul(100).to_frame("all")
    return items.pivot_table(index="occupation", columns=column, values="correct", aggfunc="mean").mul(100)


def case_correlations(items: pd.DataFrame) -> list[dict]:
    """Spearman correlation of per-occupation accuracy between every two cases."""
    table = occupation_accuracy(items, "case")
    rows = [{"a": a, "b": b, **spearman(table[a], table[b]).to_dict()}
            for a, b in combinations(CASES, 2) if a in table and b in table]
    for row, adjusted in zip(rows, bonferroni([r["p"] for r in rows]), strict=True):
        row["p_bonferroni"] = adjusted
    return rows


def pronoun_tests(items: pd.DataFrame) -> list[dict]:
    """Wilcoxon signed-rank test of per-occupation accuracy between every two pronoun sets.

    effect: matched-pairs rank-biserial r, positive when the first set (a) scores higher.
    """
    table = occupation_accuracy(items, "target")
    rows = []
    for a, b in combinations(PRONOUN_SETS, 2):
        if a not in table or b not in table:
            continue
        paired = table[[a, b]].dropna()
        if paired.empty:  # no occupation has items of both sets: nothing to test (and no NaN means)
            continue
        result = wilcoxon_signed_rank(paired[a], paired[b])
        rows.append({"a": a, "b": b, "n": len(paired), "mean_a": float(paired[a].mean()),
                     "mean_b": float(paired[b].mean()), "statistic": result.statistic,
                     "p": result.p, "effect": None if math.isnan(result.effect) else result.effect})
    for row, adjusted in zip(rows, bonferroni([r["p"] for r in rows]), strict=True):
        row["p_bonferroni"] = adjusted
    return rows


def model_correlation(before: pd.DataFrame, after: pd.DataFrame) -> dict:
    """Spearman correlation of two models' per-occupation accuracy (the same items)."""
    occupations = pd.concat([occupation_accuracy(before)["all"].rename("before"),
                             occupation_accuracy(after)["all"].rename("after")], axis=1)
    return spearman(occupations["before"], occupations["after"]).to_dict()


def distinct(items: pd.DataFrame) -> pd.DataFrame:
    """Each instance once: replicates reuse instances (the whole no-context set, overlapping
    samples), and a repeated instance is not new evidence."""
    return items.drop_duplicates("item_id") if "item_id" in items else items


def replicate_figures(items: pd.DataFrame) -> dict:
    """Accuracy per replicate set, overall and per setting, with mean ± SD over the sets (the
    paper's reporting of its three samples)."""
    def spread(values: list[float]) -> dict:
        return {"per_set": values, "mean": float(np.mean(values)),
                "sd": float(np.std(values, ddof=1)) if len(values) > 1 else None}

    sets = [part for _, part in items.groupby("replicate", sort=True)]
    return {"n_sets": len(sets), "overall": spread([accuracy(part["correct"])["accuracy"] for part in sets]),
            "settings": {s: spread([accuracy(part.loc[part["setting"] == s, "correct"])["accuracy"] for part in sets])
                         for s in SETTINGS if (items["setting"] == s).any()}}


def summarise(items: pd.DataFrame) -> dict:
    """Every figure of one run (summary.json without its meta)."""
    context = items[items["setting"] != "none"]
    return {
        "overall": accuracy(items["correct"]),
        "settings": by_setting(items),
        "over_resolution": over_resolution(items),
        "case_correlations": case_correlations(context),
        "pronoun_tests": pronoun_tests(context),
    }
