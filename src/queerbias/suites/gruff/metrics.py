"""GRUFF figures from scored items: accuracies, distractor errors, stereotypes, tests.

Input is the items table (one row per instance, as in items.csv). Accuracies are
percentages with their binomial standard error. The bias figures are those of the
paper's Sec. 8 (Mewes, Lauscher & Gautam 2026):

- over-resolution (Fig. 6, 9-11): per grammatical case and occupation, how often the
  model chose er when the referent's pronoun is sie (the noun and article say
  feminine), and sie when it is er; only settings with an introduction (d0-d5),
  neopronoun referents excluded. One stereotype score per occupation and case ranks
  the occupations: % to sie minus % to er (positive: pulled towards sie). The paper
  plots the two rates but does not name the ranking score; this difference is ours.
- the ranking's two ends (Fig. 6: "as this analysis produces a ranking", one axis with an
  ihn end and a sie end): `ranking_ends`, the first and the last ten occupations of the one
  ranking by that score, never the same occupation at both ends; an occupation with fewer
  than `MIN_REFERENTS` er or sie referents is marked `too_few` and left out of them.
- case correlations (Fig. 7): Spearman's rho between the stereotype scores of every
  two cases over occupations, Bonferroni-corrected;
- model correlation (Fig. 8, accusative; Figs. 12-14, nominative, dative, genitive = `poss`):
  Spearman's rho between two models' stereotype scores, see `model_correlations`.

Sec. 8 also reports fidelity per pronoun set over the settings with an introduction as
mean ± SD ("66.52 ± 10.59 for er/ihm"), Wilcoxon signed-rank tests between pronoun sets
and, with Fig. 5 (pronoun set × case), that cases of one pronoun set do not differ. The
paper states neither the unit of its SD nor the pairing of its tests; we use occupations
for both (`pronoun_spread`, `pronoun_tests`, `case_tests`): the template unit every
pronoun set and case shares. The binomial SE of the pooled accuracy stays beside it.
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
#: Fig. 6 shows ten occupations at each end of the ranking
TOP_OCCUPATIONS = 10
#: the fewest er and sie referents an occupation needs (each) to be placed at an end of the ranking: below it,
#: one referent moves a rate by more than ten points
MIN_REFERENTS = 10


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
    """Per case present, one row per occupation: over-resolution rates and stereotype score.

    to_er: % of items whose referent uses sie (context settings) answered er; to_sie:
    % of er-referent items answered sie; n_sie/n_er their denominators; score: to_sie
    - to_er (None unless both are defined); too_few: fewer than MIN_REFERENTS of either. Rows are sorted
    by score, sie-ward first.
    """
    pool = _stereotype_pool(items)
    result = {}
    for case in CASES:
        part = pool[pool["case"] == case]
        if part.empty:
            continue
        rows = []
        for occupation, group in part.groupby("occupation"):
            er_referents, sie_referents = group[group["target"] == "er"], group[group["target"] == "sie"]
            to_sie = 100 * float((er_referents["answer"] == "sie").mean()) if len(er_referents) else None
            to_er = 100 * float((sie_referents["answer"] == "er").mean()) if len(sie_referents) else None
            score = None if to_sie is None or to_er is None else to_sie - to_er
            rows.append({"occupation": occupation, "to_er": to_er, "n_sie": len(sie_referents),
                         "to_sie": to_sie, "n_er": len(er_referents), "score": score,
                         "too_few": min(len(er_referents), len(sie_referents)) < MIN_REFERENTS})
        result[case] = sorted(rows, key=lambda r: (r["score"] is None, -(r["score"] or 0.0), r["occupation"]))
    return result


def ranking_ends(rows: list[dict], top: int = TOP_OCCUPATIONS) -> dict:
    """Fig. 6 as one ranking of one case's `over_resolution` rows by stereotype score: the `sie` end (the
    highest scores first) and the `ihn` end (the lowest first), `top` each and never the same occupation
    twice (with fewer than 2·top ranked occupations each end takes half, the sie end the odd one). A tie
    at the cut goes to the occupation with more er and sie referents (the better-supported score), then
    to the name. Occupations marked `too_few` are not ranked (`excluded`)."""
    ranked = [r for r in rows if r["score"] is not None and not r["too_few"]]
    sizes = {"sie": min(top, (len(ranked) + 1) // 2)}
    sizes["ihn"] = min(top, len(ranked) - sizes["sie"])
    ends: dict = {}
    for end, sign in (("sie", 1), ("ihn", -1)):
        taken = {r["occupation"] for chosen in ends.values() for r in chosen}
        order = sorted((r for r in ranked if r["occupation"] not in taken),
                       key=lambda r: (-sign * r["score"], -(r["n_er"] + r["n_sie"]), r["occupation"]))
        ends[end] = order[:sizes[end]]
    return {**ends, "excluded": [r["occupation"] for r in rows if r["too_few"]], "min_referents": MIN_REFERENTS}


def _stereotype_pool(items: pd.DataFrame) -> pd.DataFrame:
    """Sec. 8: settings with an introduction, er/sie referents (neopronouns excluded)."""
    return items[(items["setting"] != "none") & items["target"].isin(BINARY)]


def stereotype_scores(items: pd.DataFrame, case: str) -> pd.Series:
    """The stereotype score (% to sie - % to er) per occupation in one case; undefined ones dropped."""
    rows = over_resolution(items).get(case, [])
    return pd.Series({r["occupation"]: r["score"] for r in rows if r["score"] is not None}, dtype=float)


def stereotype_correlation(items_a: pd.DataFrame, items_b: pd.DataFrame, case: str = "acc") -> dict:
    """Fig. 8 (acc), 12-14 (nom, dat, gen): Spearman's rho between two models' stereotype scores over
    shared occupations."""
    a, b = stereotype_scores(items_a, case), stereotype_scores(items_b, case)
    shared = a.index.intersection(b.index)
    return {"case": case, **spearman(a[shared], b[shared]).to_dict()}


def comparison_extras(items_a: pd.DataFrame, items_b: pd.DataFrame) -> dict:
    """The comparison's extras: `model_correlation` for the accusative (Fig. 8) and
    `model_correlation_<case>` for the other cases (Figs. 12-14), one entry each so that the
    comparator Bonferroni-corrects each across the AFTER runs; `fidelity_by_pronoun_case`, both
    models' Fig. 5 (accuracy per pronoun set and case, settings with an introduction)."""
    correlations = {("model_correlation" if case == "acc" else f"model_correlation_{case}"):
                    stereotype_correlation(items_a, items_b, case)
                    for case in ("acc", *(c for c in CASES if c != "acc"))}
    figures = {side: pronoun_case_figures(items[items["setting"] != "none"])
               for side, items in (("before", items_a), ("after", items_b))}
    return {**correlations, "fidelity_by_pronoun_case": figures}


def occupation_accuracy(items: pd.DataFrame, column: str | None = None) -> pd.DataFrame:
    """Accuracy (%) per occupation, one column per level of `column` (or one column 'all')."""
    if column is None:
        return items.groupby("occupation")["correct"].mean().mul(100).to_frame("all")
    return items.pivot_table(index="occupation", columns=column, values="correct", aggfunc="mean").mul(100)


def case_correlations(items: pd.DataFrame) -> list[dict]:
    """Fig. 7: Spearman's rho between the stereotype scores of every two cases, Bonferroni-corrected."""
    scores = {case: stereotype_scores(items, case) for case in CASES}
    rows = []
    for a, b in combinations(CASES, 2):
        if scores[a].empty or scores[b].empty:
            continue
        shared = scores[a].index.intersection(scores[b].index)
        rows.append({"a": a, "b": b, **spearman(scores[a][shared], scores[b][shared]).to_dict()})
    for row, adjusted in zip(rows, bonferroni([r["p"] for r in rows]), strict=True):
        row["p_bonferroni"] = adjusted
    return rows


def pronoun_tests(items: pd.DataFrame) -> list[dict]:
    """Wilcoxon signed-rank test of per-occupation accuracy between every two pronoun sets.

    effect: matched-pairs rank-biserial r, positive when the first set (a) scores higher.
    """
    return _paired_tests(occupation_accuracy(items, "target"), PRONOUN_SETS)


def case_tests(items: pd.DataFrame) -> dict[str, list[dict]]:
    """Sec. 8 / Fig. 5: per pronoun set, the Wilcoxon signed-rank test of per-occupation accuracy
    between every two cases, Bonferroni-corrected within the pronoun set."""
    return {pronoun: tests for pronoun in PRONOUN_SETS
            if (tests := _paired_tests(occupation_accuracy(items[items["target"] == pronoun], "case"), CASES))}


def _paired_tests(table: pd.DataFrame, levels) -> list[dict]:
    """Wilcoxon signed-rank tests between every two columns of a per-occupation accuracy table,
    over the occupations that have both; Bonferroni across the tests."""
    rows = []
    for a, b in combinations(levels, 2):
        if a not in table or b not in table:
            continue
        paired = table[[a, b]].dropna()
        if paired.empty:  # no occupation has items of both levels: nothing to test (and no NaN means)
            continue
        result = wilcoxon_signed_rank(paired[a], paired[b])
        rows.append({"a": a, "b": b, "n": len(paired), "mean_a": float(paired[a].mean()),
                     "mean_b": float(paired[b].mean()), "statistic": result.statistic,
                     "p": result.p, "effect": None if math.isnan(result.effect) else result.effect})
    for row, adjusted in zip(rows, bonferroni([r["p"] for r in rows]), strict=True):
        row["p_bonferroni"] = adjusted
    return rows


def pronoun_spread(items: pd.DataFrame, pronoun: str) -> dict:
    """Accuracy of one pronoun set with the binomial SE of the pooled items (`se`) and, as Sec. 8
    reports it, mean ± SD: here over the occupations' accuracies (`occupations`)."""
    part = items[items["target"] == pronoun]
    per_occupation = occupation_accuracy(part)["all"] if len(part) else pd.Series(dtype=float)
    spread = {"n": len(per_occupation), "mean": float(per_occupation.mean()) if len(per_occupation) else None,
              "sd": float(per_occupation.std(ddof=1)) if len(per_occupation) > 1 else None}
    return {**accuracy(part["correct"]), "occupations": spread}


def pronoun_case_figures(items: pd.DataFrame) -> dict:
    """Fig. 5: accuracy per pronoun set and case."""
    return {p: {case: accuracy(items.loc[(items["target"] == p) & (items["case"] == case), "correct"])
                for case in CASES} for p in PRONOUN_SETS}


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
    """Every figure of one run (summary.json without its meta).

    overall: all settings together, no-context agreement included (our addition);
    introduced: the settings with an introduction (d0-d5), the paper's Sec. 8 pool, by pronoun
    set (with the SD over occupations) and by pronoun set and case (Fig. 5).
    """
    context = items[items["setting"] != "none"]
    return {
        "overall": accuracy(items["correct"]),
        "introduced": {**accuracy(context["correct"]),
                       "by_pronoun": {p: pronoun_spread(context, p) for p in PRONOUN_SETS},
                       "by_pronoun_case": pronoun_case_figures(context)},
        "settings": by_setting(items),
        "over_resolution": (over := over_resolution(items)),
        "ranking_ends": {case: ranking_ends(rows) for case, rows in over.items()},
        "case_correlations": case_correlations(items),
        "pronoun_tests": pronoun_tests(context),
        "case_tests": case_tests(context),
    }
