"""The run's last line names what its guards refused, and says so loudly when they refused every
checkpoint: a mitigation that pushed a group into the stereotype on frames it never saw is not one to use."""

from __future__ import annotations

from pathlib import Path

from queerbias.train.config import load_config
from queerbias.train.runner import guard_line

DEMO = Path(__file__).resolve().parents[2] / "configs" / "demo-gemma-lora.yaml"


def comparison(step: int, shifted: list[str], delta_excess: float = -1.0) -> dict:
    groups = {"gay": {"n_units": 6, "d": {"before": -0.4, "after": 1.2, "towards": 6}}}
    return {"after": {"step": step}, "association": {"delta_excess": delta_excess, "excess_before": 7.89,
                                                     "excess_after": 7.89 + delta_excess},
            "shift": {"unit": "frame", "shifted": shifted, "shifted_c": [], "groups": groups}}


def documents(*comparisons: dict) -> dict:
    return {"shapes": {"suite": "pairs", "comparisons": list(comparisons)},
            "bias": {"suite": "pairs", "comparisons": [{"after": {"step": c["after"]["step"]}} for c in comparisons]}}


def test_every_checkpoint_refused_is_said_in_capitals():
    config = load_config(DEMO)
    line = guard_line(config, documents(comparison(8, ["gay"])))
    assert line.startswith("GUARDS REFUSED EVERY CHECKPOINT (step 8: shapes: shifted towards the stereotype: "
                           "gay (d -0.40 -> 1.20 nats, 6 of 6 frames towards))")
    assert "not a mitigation to use" in line


def test_some_checkpoints_refused_are_named_and_none_refused_says_nothing():
    config = load_config(DEMO)
    line = guard_line(config, documents(comparison(4, []), comparison(8, [], delta_excess=2.0)))
    assert line.startswith("guards refused step 8: shapes: association excess rose 7.89 -> 9.89 (allowed +0)")
    assert guard_line(config, documents(comparison(4, []), comparison(8, []))) is None
