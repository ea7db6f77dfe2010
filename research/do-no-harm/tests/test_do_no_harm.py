"""bench/do_no_harm.py --checkpoints: every evaluated checkpoint against the base, from summaries."""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

from math import comb  # noqa: E402

from do_no_harm import checkpoint_table, moved, pushed  # noqa: E402


def _summary(folder: Path, bench: str, scores: dict[str, float], soft: float, excess: float) -> None:
    (folder / bench).mkdir(parents=True)
    (folder / bench / "summary.json").write_text(json.dumps(
        {"groups": {g: {"bias_score": b} for g, b in scores.items()}, "distance": {"soft": soft},
         "direction": {"stereotype_excess": excess}}))


def test_moved_names_the_groups_that_went_over_the_line():
    before = {"groups": {"a": {"bias_score": 14.3}, "b": {"bias_score": 60.0}, "c": {"bias_score": 70.0}}}
    after = {"groups": {"a": {"bias_score": 61.9}, "b": {"bias_score": 60.0}, "c": {"bias_score": 90.0}}}
    assert moved(before, after, 60.0) == ["a 14→62"]  # b stays on the line; c was above it already
    assert moved(before, after, 50.0) == ["a 14→62"]


def test_every_checkpoint_in_step_order(tmp_path):
    cell = tmp_path / "runs" / "model" / "keep" / "seed-1"
    _summary(cell / "base", "test", {"a": 14.3, "b": 80.0}, soft=2.0, excess=15.0)
    _summary(cell / "base", "val", {"a": 40.0}, soft=1.0, excess=0.0)
    _summary(cell / "checkpoint-12", "test", {"a": 61.9, "b": 50.0}, soft=1.0, excess=5.95)
    _summary(cell / "checkpoint-12", "val", {"a": 52.0}, soft=1.0, excess=1.0)
    _summary(cell / "checkpoint-4", "test", {"a": 20.0, "b": 70.0}, soft=1.5, excess=10.0)
    _summary(cell / "checkpoint-4", "val", {"a": 30.0}, soft=1.0, excess=0.0)
    lines = checkpoint_table([cell], "test", "val").splitlines()
    assert lines[2:] == ["| keep | 1 | 4 | 10.00 | -25.0% | none | none |",
                         "| keep | 1 | 12 | 5.95 | -50.0% | a 14→62 | a 40→52 |"]


def test_pushed_says_how_likely_the_crossing_is_by_chance():
    direction = {"groups": {
        "lesbian": {"n": 21, "bias_before": 14.3, "bias_after": 71.4},
        "lgbtq": {"n": 21, "bias_before": 38.1, "bias_after": 61.9},
        "gay": {"n": 21, "bias_before": 66.7, "bias_after": 90.5},  # above 60 already
    }}
    tail = {k: sum(comb(21, j) for j in range(k, 22)) / 2**21 for k in (13, 15)}  # P(K >= k), K ~ Bin(21, 1/2)
    assert pushed(direction) == [f"lesbian (14.3 → 71.4; 15/21, p {tail[15]:.3f} if indifferent)",
                                 f"lgbtq (38.1 → 61.9; 13/21, p {tail[13]:.3f} if indifferent)"]
