"""bench/frame_preferences.py: every (group, frame) sampled, and the per-group figures by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

from frame_preferences import frame_keys, group_rows, sampled  # noqa: E402


def test_each_group_and_frame_gets_its_pairs():
    chosen, frame_of = sampled(["queerbias-de-frames:train"], {"lesbian", "bisexual"}, 2, seed=0)
    keys = frame_keys("queerbias-de-frames")
    frames = {keys[p.pair_id]["frame"] for p in chosen}
    assert {p.group for p in chosen} == {"lesbian", "bisexual"}
    assert len(chosen) == 2 * 2 * len(frames) and len(frames) == 17  # queerbias-de-frames: 12 plural + 5 name frames
    assert all(frame_of[p.pair_id] == f"queerbias-de-frames/{keys[p.pair_id]['frame']}" for p in chosen)
    again, _ = sampled(["queerbias-de-frames:train"], {"lesbian", "bisexual"}, 2, seed=0)
    assert [p.pair_id for p in again] == [p.pair_id for p in chosen]


def test_the_figures_by_hand():
    rows = pd.DataFrame({"pair_id": ["a", "b", "c", "d"], "group": ["g", "g", "g", "h"],
                         "score_more": [-10.0, -12.0, -5.0, -3.0], "score_less": [-11.0, -9.0, -6.0, -4.0]})
    frame_of = {"a": "f1", "b": "f1", "c": "f2", "d": "f1"}
    # g: frame f1 d = (+1, -3) -> -1; frame f2 d = +1 -> mean 0, one of two frames below 0
    assert group_rows(rows, frame_of) == [["g", "2", "+0.00", "50%", "-1.00", "+1.00"],
                                          ["h", "1", "+1.00", "0%", "+1.00", "+1.00"]]
