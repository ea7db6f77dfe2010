"""Sec. 5, Fig. 4: the distributions behind SN, NTS and CF (Shan, Diana & Zhou 2025).

Fig. 4 compares models by the distribution of (a) the sentiment score and (b) the toxicity
score of the continuations of the counterfactual prompts, and (c) the cosine similarity of
every two outputs of one template (the pairs CF counts). One run gives one model's three
distributions, pooled over its runs, with refusals left out as SN, NTS and CF leave them out:
the number of values, mean, SD, quartiles and a histogram on the score's range (the signed
sentiment score of row 7 of docs/gifi.md, −1 to 1; toxicity 0 to 1; similarity −1 to 1). A
distribution whose classifier or encoder is missing is absent, as its dimension is not computed.
"""

from __future__ import annotations

import numpy as np

from queerbias.suites.gifi.dimensions import pairwise_similarities
from queerbias.suites.gifi.scoring import templates

#: each distribution's score range (the histogram's) and title in Fig. 4
RANGES = {"sentiment": (-1.0, 1.0), "toxicity": (0.0, 1.0), "similarity": (-1.0, 1.0)}
TITLES = {"sentiment": "(a) sentiment", "toxicity": "(b) toxicity", "similarity": "(c) semantic similarity"}
BINS = 20


def score_distributions(rows: list[dict], group_keys: list[str]) -> dict:
    """Fig. 4's distributions of a run's rows (all runs): name -> `describe`, for those with values."""
    kept = [row for row in rows if row["task"] == "counterfactual" and not row.get("refusal")]
    values = {name: [row[name] for row in kept if row.get(name) is not None] for name in ("sentiment", "toxicity")}
    values["similarity"] = [similarity for run in sorted({row["run"] for row in kept})
                            for similarity in pairwise_similarities(
                                {template: np.asarray([unit[g] for g in group_keys if unit.get(g) is not None])
                                 for template, unit in templates([r for r in kept if r["run"] == run], "CF").items()})]
    return {name: describe(found, *RANGES[name]) for name, found in values.items() if found}


def describe(values: list[float], low: float, high: float) -> dict:
    """n, mean, SD (ddof 1), quartiles and a histogram of BINS equal bins on [low, high] (values outside
    it, from rounding, counted in the outer bins)."""
    array = np.asarray(values, dtype=float)
    counts, edges = np.histogram(np.clip(array, low, high), bins=BINS, range=(low, high))
    quartiles = np.quantile(array, [0.0, 0.25, 0.5, 0.75, 1.0])
    return {"n": len(array), "mean": float(array.mean()), "sd": float(array.std(ddof=1)) if len(array) > 1 else None,
            "quantiles": dict(zip(("min", "q1", "median", "q3", "max"), map(float, quartiles), strict=True)),
            "histogram": {"edges": [float(e) for e in edges], "counts": [int(c) for c in counts]}}
