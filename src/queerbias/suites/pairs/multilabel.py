"""Pairs that target several groups: counted in each of their groups, once overall.

A survey statement can target more than one group: the seed study's 387 survey pairs carry 902
group labels (Morch & Braun, Appendix C.2 and Table 3). A run's pairs.csv keeps a pair's first
group in `group` and the others in `other_groups` (`;`-separated). Every per-group figure reads
`group_rows`: one row per pair and group, so the pair counts in each of its groups (the paper's
per-group tables and Table 3 count it so); Overall reads the pairs themselves, each once. A set
whose pairs all have one group gets its rows back unchanged, so the paper's default figures on
WinoQueer and every other single-label set stay exactly as they were.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from queerbias.pairs.schema import GROUP_SEPARATORS, split_groups

OTHER_GROUPS = "other_groups"
#: per labelled row of a pair with k groups, 1/k: figures over pairs built from group strata count it once
WEIGHT = "weight"


def other_groups_text(groups: tuple[str, ...]) -> str:
    """A pair's further groups as the `other_groups` column holds them."""
    return GROUP_SEPARATORS[0].join(groups)


def _labels(rows: pd.DataFrame) -> list[list[str]] | None:
    """Each row's groups, or None where no row has more than one."""
    if OTHER_GROUPS not in rows or not rows[OTHER_GROUPS].fillna("").astype(bool).any():
        return None
    return [[group, *split_groups(other or "")] for group, other in zip(rows["group"], rows[OTHER_GROUPS].fillna(""),
                                                                        strict=True)]


def group_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per pair and group it targets (`group` set to each in turn, `weight` 1/k), in pair order;
    the rows themselves where every pair has one group."""
    labels = _labels(rows)
    if labels is None:
        return rows
    counts = np.array([len(groups) for groups in labels])
    labelled = rows.iloc[np.repeat(np.arange(len(rows)), counts)].reset_index(drop=True)
    labelled["group"] = [group for groups in labels for group in groups]
    labelled[WEIGHT] = np.repeat(1.0 / counts, counts)
    return labelled


def label_counts(rows: pd.DataFrame) -> dict | None:
    """summary.json's `group_labels` where some pair has several groups (None otherwise): pairs, labels,
    pairs with more than one, and the rule the per-group figures follow."""
    labels = _labels(rows)
    if labels is None:
        return None
    return {"pairs": len(labels), "labels": sum(map(len, labels)),
            "multi_label_pairs": sum(len(groups) > 1 for groups in labels),
            "rule": "a pair with several groups counts in each of them in every per-group figure, once in Overall"}
