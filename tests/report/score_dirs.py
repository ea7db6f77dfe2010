"""Synthetic `queerbias score` output directories, written to the scorer's output contract."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

GROUPS = {"gay": 30, "lesbian": 25, "nonbinary": 20, "trans": 25}


def make_pairs(seed: int = 0, groups: dict[str, int] = GROUPS) -> pd.DataFrame:
    """Pairs with random log-likelihoods; ids with leading zeros, some empty categories."""
    rng = np.random.default_rng(seed)
    rows = []
    for group, count in groups.items():
        for i in range(count):
            rows.append({
                "pair_id": f"{len(rows):04d}",
                "group": group,
                "counterfactual_group": "straight",
                "category": "" if i % 3 == 0 else "family",
                "sent_more": f"{group} person {i} is X.",
                "sent_less": f"straight person {i} is X.",
            })
    pairs = pd.DataFrame(rows)
    return with_scores(pairs, -40 + rng.normal(0, 3, len(pairs)), -40 + rng.normal(0, 3, len(pairs)))


def with_scores(pairs: pd.DataFrame, score_more, score_less) -> pd.DataFrame:
    """Set the score columns and the derived biased/neutral/soft columns as the scorer does."""
    pairs = pairs.copy()
    pairs["score_more"] = np.round(np.asarray(score_more, dtype=float), 3)
    pairs["score_less"] = np.round(np.asarray(score_less, dtype=float), 3)
    pairs["biased"] = (pairs["score_more"] > pairs["score_less"]).astype(int)
    pairs["neutral"] = (pairs["score_more"] == pairs["score_less"]).astype(int)
    total = pairs["score_more"] + pairs["score_less"] + 1e-8
    pairs["soft"] = np.round(100 * pairs["score_less"] / total, 2)
    return pairs


def shifted(pairs: pd.DataFrame, seed: int, shift: float, noise: float = 1.0) -> pd.DataFrame:
    """The same pairs rescored: the stereotypical sentence made `shift` nats less likely."""
    rng = np.random.default_rng(seed)
    n = len(pairs)
    return with_scores(pairs, pairs["score_more"] - shift + rng.normal(0, noise, n),
                       pairs["score_less"] + rng.normal(0, noise, n))


def summarize(pairs: pd.DataFrame) -> dict:
    """The summary statistics block of summary.json for a set of pairs."""
    n = len(pairs)
    p = pairs["biased"].mean()
    soft = pairs["soft"].to_numpy()
    return {
        "n": n,
        "n_neutral": int(pairs["neutral"].sum()),
        "bias_score": 100 * p,
        "bias_se": 100 * float(np.sqrt(p * (1 - p) / n)),
        "soft_score": float(soft.mean()),
        "soft_se": float(soft.std(ddof=1) / np.sqrt(n)) if n > 1 else None,
    }


def write_score_dir(path: Path, pairs: pd.DataFrame, *, spec: str = "hf:test/model", checksum: str = "sha256:aaa",
                    scoring_id: str = "cfg-1", step: int | None = None, perplexity: float | None = None) -> Path:
    """Write pairs.csv and summary.json (meta as the scorer writes it) into `path`."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    pairs.to_csv(path / "pairs.csv", index=False)
    meta = {
        "model": {"spec": spec, "fingerprint": f"fp-{spec}", "kind": "hf"},
        "data": {"name": "synthetic", "path": "pairs.csv", "checksum": checksum},
        "scoring": {"metric": "pll"},
        "scoring_id": scoring_id,
        "versions": {},
        "timings": {},
        "created_at": "2025-01-01T00:00:00+00:00",
    }
    if step is not None:
        meta["step"] = step
    if perplexity is not None:
        meta["perplexity"] = perplexity
    summary = {
        "overall": summarize(pairs),
        "groups": {group: summarize(items) for group, items in pairs.groupby("group")},
        "meta": meta,
    }
    (path / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return path


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR header, after checking the signature."""
    header = Path(path).read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and header[12:16] == b"IHDR"
    return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")
