"""Sec. 6 i: how well each layer's reformulation embedding tells the strategies apart.

Waldis et al. (2024) compute layer-wise average embeddings (mean over the tokens, Reimers &
Gurevych 2019) of an original s and its reformulation s', isolate the reformulation as
r = s - s', cluster the r of every layer with KMeans (Lloyd 1982) and score the clusters
against the strategies with the Rand index, mutual information, completeness and
homogeneity; the scores fall with the layer number (Spearman ρ = -0.40, -0.56, -0.55,
-0.54 over their LMs). Here, per layer of one classifier: KMeans with k = the number of
strategies (k-means++ seeding, 10 seeded restarts, the lowest inertia kept, as
scikit-learn's defaults), the four scores (the plain Rand index, mutual information in
nats; as `sklearn.metrics`' rand_score, mutual_info_score, completeness_score and
homogeneity_score), and Spearman's ρ of each score against the layer number. Identical
reformulations (r = 0) are left out: nothing was reformulated.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from queerbias.report.paired_stats import cell_rng, spearman
from queerbias.suites.lou.data import ORIGINAL

SCORES = {"rand_index": "Rand index", "mutual_information": "mutual information", "completeness": "completeness",
          "homogeneity": "homogeneity"}
RESTARTS = 10
ITERATIONS = 300


def kmeans(points: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Cluster labels of `points` (n, d): Lloyd's algorithm from k-means++ seeds, the best of RESTARTS runs."""
    best, best_inertia = None, np.inf
    for _ in range(RESTARTS):
        centres = _seeds(points, k, rng)
        labels = np.zeros(len(points), dtype=int)
        for _ in range(ITERATIONS):
            distances = ((points[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
            labels = distances.argmin(axis=1)
            moved = np.array([points[labels == c].mean(axis=0) if (labels == c).any() else centres[c]
                              for c in range(k)])
            if np.allclose(moved, centres):
                break
            centres = moved
        inertia = float(((points - centres[labels]) ** 2).sum())
        if inertia < best_inertia:
            best, best_inertia = labels, inertia
    return best


def _seeds(points: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++: the first centre at random, each next one drawn in proportion to the squared distance."""
    centres = [points[rng.integers(len(points))]]
    for _ in range(1, k):
        distances = ((points[:, None, :] - np.asarray(centres)[None, :, :]) ** 2).sum(axis=2).min(axis=1)
        total = distances.sum()
        centres.append(points[rng.choice(len(points), p=distances / total)] if total > 0
                       else points[rng.integers(len(points))])
    return np.asarray(centres, dtype=float)


def scores(truth: Sequence, found: Sequence) -> dict[str, float]:
    """Rand index, mutual information (nats), completeness and homogeneity of cluster labels `found`
    against classes `truth`, from their contingency table."""
    classes, class_index = np.unique(np.asarray(truth), return_inverse=True)
    clusters, cluster_index = np.unique(np.asarray(found), return_inverse=True)
    table = np.zeros((len(classes), len(clusters)))
    np.add.at(table, (class_index, cluster_index), 1)
    n = table.sum()

    def pairs(counts) -> float:
        return float((counts * (counts - 1) / 2).sum())

    together = pairs(table)
    same_class, same_cluster, total = pairs(table.sum(axis=1)), pairs(table.sum(axis=0)), n * (n - 1) / 2
    rand = (total + 2 * together - same_class - same_cluster) / total if total else 1.0
    joint = table / n
    a, b = joint.sum(axis=1), joint.sum(axis=0)
    present = joint > 0
    information = float((joint[present] * np.log(joint[present] / np.outer(a, b)[present])).sum())

    def entropy(p) -> float:
        p = p[p > 0]
        return float(-(p * np.log(p)).sum())

    h_class, h_cluster = entropy(a), entropy(b)
    return {"rand_index": float(rand), "mutual_information": information,
            "completeness": information / h_cluster if h_cluster else 1.0,
            "homogeneity": information / h_class if h_class else 1.0}


def layer_clustering(rows: Sequence[dict], seed: int = 0) -> dict | None:
    """Per layer the four scores of KMeans on r against the strategies, and each score's Spearman ρ
    against the layer number; None for rows without reformulation embeddings (`layers` off)."""
    kept = [r for r in rows if r["strategy"] != ORIGINAL and not r["identical"] and r.get("reformulation_layers")]
    strategies = sorted({r["strategy"] for r in kept})
    if len(strategies) < 2 or len(kept) <= len(strategies):
        return None
    embeddings = np.asarray([r["reformulation_layers"] for r in kept], dtype=float)  # (rows, layers, hidden)
    truth = [r["strategy"] for r in kept]
    layers = [{"layer": layer, **scores(truth, kmeans(embeddings[:, layer, :], len(strategies),
                                                      cell_rng(seed, "layer clusters", str(layer))))}
              for layer in range(embeddings.shape[1])]
    numbers = [entry["layer"] for entry in layers]
    return {"n": len(kept), "k": len(strategies), "layers": layers,
            "correlation": {name: spearman(numbers, [entry[name] for entry in layers]).to_dict() for name in SCORES}}
