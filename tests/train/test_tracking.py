"""`report_to: tensorboard`: the event files hold the training curves and every checkpoint's figures."""

from __future__ import annotations

import pytest

from queerbias.errors import QueerbiasError
from queerbias.train.config import check_installed, config_from_dict
from queerbias.train.runner import run_training

from .helpers import small_config


def test_tensorboard_events_hold_per_group_bias_at_every_checkpoint(tiny_gpt2, tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    config = config_from_dict(small_config(tiny_gpt2, tmp_path / "run", report_to="tensorboard",
                                           method="full", max_steps=2, eval_every=1))
    result = run_training(config)
    (events,) = (tmp_path / "run" / "runs").rglob("events.out.tfevents.*")
    scalars = EventAccumulator(str(events.parent), size_guidance={"scalars": 0}).Reload()
    tags = set(scalars.Tags()["scalars"])
    assert {"train/loss", "train/learning_rate", "train/train_tokens_per_second",
            "eval/perplexity", "train/bias/bias", "train/distance/bias/bias"} <= tags

    for record in result["metrics"][1:]:  # the checkpoints (step 0 is before training)
        groups = record["benchmarks"]["bias"]["groups"]
        assert groups
        for group, value in groups.items():
            logged = {e.step: e.value for e in scalars.Scalars(f"train/bias/bias/{group}")}
            assert logged[record["step"]] == pytest.approx(value, rel=1e-6)
        logged = {e.step: e.value for e in scalars.Scalars("eval/perplexity")}
        assert logged[record["step"]] == pytest.approx(record["perplexity"], rel=1e-6)
    assert [r["step"] for r in result["metrics"]] == [0, 1, 2]


def test_report_to_names_a_trainer_integration(tiny_gpt2, tmp_path):
    with pytest.raises(QueerbiasError, match="config key 'report_to' must be 'none' or one of"):
        check_installed(config_from_dict(small_config(tiny_gpt2, tmp_path, report_to="tensorbord")))
    with pytest.raises(QueerbiasError, match="config key 'report_to' must be 'none' or one of"):
        run_training(config_from_dict(small_config(tiny_gpt2, tmp_path / "refused", report_to="tensorbord")))
    assert not (tmp_path / "refused").exists()  # refused before anything was written
    assert config_from_dict(small_config(tiny_gpt2, tmp_path)).report_to == "none"
