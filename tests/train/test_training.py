"""End-to-end training runs on tiny models: checkpoints, bias results, metrics, compare."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from huggingface_hub import ModelCard
from safetensors import safe_open

from queerbias.errors import QueerbiasError
from queerbias.models import load_model
from queerbias.suites.pairs.declaration import PairSettings
from queerbias.suites.pairs.suite import PairsSuite
from queerbias.suites.store import run_to_dir
from queerbias.train.config import config_from_dict
from queerbias.train.runner import run_training

from .helpers import TINY_BENCHMARK, logged_losses, small_config


def test_checkpoints_hold_bias_results_and_marker(llama_run):
    _, result = llama_run
    run = result["run_dir"]
    for step in (2, 4):
        folder = run / f"checkpoint-{step}"
        assert (folder / "queerbias-complete").is_file()
        summary = json.loads((folder / "bias" / "summary.json").read_text())
        assert summary["meta"]["step"] == step
        assert summary["meta"]["run"] == str(run)
        assert summary["meta"]["data"]["n_pairs"] == 20
        assert summary["meta"]["perplexity"] > 1
        assert (folder / "bias" / "pairs.csv").is_file()
    base = json.loads((run / "base" / "bias" / "summary.json").read_text())
    assert base["meta"]["step"] == 0


def test_metrics_lines_one_per_checkpoint(llama_run):
    _, result = llama_run
    lines = [json.loads(line) for line in (result["run_dir"] / "metrics.jsonl").read_text().splitlines()]
    assert [line["step"] for line in lines] == [0, 2, 4]
    assert lines[0]["train_loss"] is None and lines[1]["train_loss"] > 0
    for line in lines:
        assert line["benchmarks"]["bias"]["overall"] is not None
        summary = json.loads((result["run_dir"] / ("base" if line["step"] == 0 else
                                                   f"checkpoint-{line['step']}") / "bias" /
                              "summary.json").read_text())
        assert line["perplexity"] == summary["meta"]["perplexity"]
        assert line["benchmarks"]["bias"]["overall"] == summary["overall"]["bias_score"]


def test_compare_report_with_trajectory(llama_run):
    _, result = llama_run
    compare = result["run_dir"] / "compare" / "bias"
    assert result["compare"] == [compare]
    delta = json.loads((compare / "delta.json").read_text())
    assert [row["step"] for row in delta["trajectory"]] == [0, 2, 4]
    assert delta["best"]["criterion"] == "closest50"
    assert (compare / "trajectory.png").is_file() and (compare / "delta.md").is_file()


def test_adapter_and_merged_model_saved(llama_run):
    _, result = llama_run
    assert (result["final"] / "adapter_config.json").is_file()
    assert not list(result["final"].glob("*.bin"))  # safetensors only: no pickled training arguments
    merged = load_model(str(result["merged"]))
    assert merged.kind == "causal"


def test_checkpoint_scores_equal_a_fresh_load(llama_run, tmp_path):
    """The in-training model was scored exactly as the saved checkpoint scores."""
    _, result = llama_run
    folder = result["run_dir"] / "checkpoint-4"
    fresh = run_to_dir(PairsSuite(), str(folder), "queerbias-de", tmp_path / "fresh", PairSettings(sample=20),
                       progress=False)
    during = json.loads((folder / "bias" / "summary.json").read_text())
    assert fresh["overall"]["bias_score"] == during["overall"]["bias_score"]
    a = pd.read_csv(folder / "bias" / "pairs.csv")
    b = pd.read_csv(tmp_path / "fresh" / "pairs.csv")
    # written to 3 places: at most one unit apart, where float noise meets a rounding boundary (tests/rounded.py)
    assert (a["score_more"] - b["score_more"]).abs().max() <= 1e-3 + 1e-9


def test_rerun_with_another_config_is_refused(llama_run, tiny_llama):
    config, _ = llama_run
    changed = config_from_dict({**config.to_dict(), "learning_rate": 0.5})
    with pytest.raises(QueerbiasError, match="learning_rate"):
        run_training(changed)


def test_rerunning_a_finished_run_writes_nothing(llama_run, capsys):
    """Issue 21: a finished run is never trained again or rewritten (final/, compare/, the card);
    the rerun says so and returns what the run holds."""
    config, result = llama_run
    run = result["run_dir"]
    files = {path: (path.stat().st_mtime_ns, path.read_bytes()) for path in run.rglob("*") if path.is_file()}
    again = run_training(config)
    assert again["finished"] and again["metrics"] == result["metrics"] and again["compare"] == result["compare"]
    assert {path: (path.stat().st_mtime_ns, path.read_bytes()) for path in run.rglob("*") if path.is_file()} == files
    assert "holds a finished run of this config" in capsys.readouterr().out


def test_full_finetuning_lowers_loss_and_perplexity(tiny_gpt2, tmp_path):
    config = config_from_dict(small_config(
        tiny_gpt2, tmp_path / "run", method="full", max_steps=8, eval_every=8,
        learning_rate=3e-3, eval__benchmarks=TINY_BENCHMARK))
    result = run_training(config)
    losses = logged_losses(tmp_path / "run" / "checkpoint-8")
    assert losses[-1] < losses[0] - 0.3, losses
    assert result["metrics"][-1]["perplexity"] < result["metrics"][0]["perplexity"]
    card = ModelCard.load(result["final"] / "README.md")
    assert card.data.library_name == "transformers" and "| in-domain" in card.text


def test_masked_lora_trains_head_transform_not_decoder(tiny_bert, tmp_path):
    config = config_from_dict(small_config(tiny_bert, tmp_path / "run", max_steps=2))
    result = run_training(config)
    assert [m["step"] for m in result["metrics"]] == [0, 2]
    with safe_open(result["final"] / "adapter_model.safetensors", "pt") as weights:
        keys = list(weights.keys())
    assert any("predictions.transform.dense" in k for k in keys)
    assert any("lora_A" in k and "query" in k for k in keys)
    assert not any("decoder" in k for k in keys)


@pytest.mark.parametrize("family", ["tiny_gpt2", "tiny_bert"])
def test_perplexity_is_a_hand_computation_one_document_at_a_time(family, request):
    """exp of the mean NLL over every held-out token (causal) or over a seeded 15% of positions
    masked per batch of 8 (masked), each document through the model alone, unpadded."""
    import math

    import torch

    from queerbias.families import get_family
    from queerbias.models import load_model
    from queerbias.train.evaluation import perplexity

    lm = load_model(str(request.getfixturevalue(family)))
    lm.model.eval()
    tokenizer = lm.tokenizer
    docs = [tokenizer(text)["input_ids"] for text in ("Schwule Männer sind nett.", "Lesbische Frauen sind klug.",
                                                       "Queere Menschen lesen gern und lachen viel.")]
    total, count = 0.0, 0
    with torch.no_grad():
        if lm.kind == "causal":
            for ids in docs:
                logits = lm.model(input_ids=torch.tensor([ids])).logits[0, :-1]
                total += float(torch.nn.functional.cross_entropy(logits, torch.tensor(ids[1:]), reduction="sum"))
                count += len(ids) - 1
        else:
            width = max(map(len, docs))
            ids = torch.tensor([d + [tokenizer.pad_token_id] * (width - len(d)) for d in docs])
            mask = torch.tensor([[1] * len(d) + [0] * (width - len(d)) for d in docs])
            inputs, targets = get_family(lm.kind).perplexity_targets(ids, mask, tokenizer, 0.5,
                                                                       torch.Generator().manual_seed(0))
            logits = lm.model(input_ids=inputs, attention_mask=mask).logits
            total = float(torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="sum",
                                                            ignore_index=-100))
            count = int((targets != -100).sum())
    assert count > 0
    measured = perplexity(lm.model, docs, lm.kind, tokenizer, mlm_probability=0.5, seed=0)
    assert measured == pytest.approx(math.exp(total / count), rel=1e-5)


def test_a_test_split_is_judged_at_every_checkpoint_and_chooses_none(tiny_llama, tmp_path):
    """queerbias-de-shapes:test in a run of two checkpoints: its report has the trajectory and
    says that no checkpoint is chosen by it (such a run crashed when writing that report)."""
    benchmarks = [*TINY_BENCHMARK, {"suite": "pairs", "data": "queerbias-de-shapes:test", "sample": 4,
                                    "name": "contrary-test"}]
    result = run_training(config_from_dict(small_config(tiny_llama, tmp_path / "run", eval__benchmarks=benchmarks)))
    compare = result["run_dir"] / "compare" / "contrary-test"
    delta = json.loads((compare / "delta.json").read_text())
    assert [row["step"] for row in delta["trajectory"]] == [0, 2, 4] and delta["best"] is None
    assert "it is a test split, judged on and never selected on" in (compare / "delta.md").read_text()
    assert "best" in json.loads((result["run_dir"] / "compare" / "bias" / "delta.json").read_text())


def test_a_criterion_the_data_cannot_give_is_refused_before_the_first_step(tiny_gpt2, tmp_path):
    """`best: association` reads the association of every checkpoint; queerbias-de has no neutral predicates, so
    the run stops once its base is scored, with the key to change, instead of failing after its last step."""
    config = config_from_dict(small_config(tiny_gpt2, tmp_path / "run", max_steps=2, eval_every=2,
                                           eval__benchmarks=TINY_BENCHMARK, eval__perplexity=False,
                                           eval__general_perplexity=False, compare__best="association"))
    with pytest.raises(QueerbiasError, match="^config key 'compare.best': association needs the association \\(a set "
                                             "with neutral predicates\\) of every checkpoint, and the base's "
                                             "queerbias-de has none; choose another criterion for this benchmark$"):
        run_training(config)
    assert (tmp_path / "run" / "base" / "bias" / "summary.json").is_file()
    assert not list((tmp_path / "run").glob("checkpoint-*"))
    shapes = [{"suite": "pairs", "data": "queerbias-de-shapes:validation", "sample": 1, "name": "shapes",
               "options": {"sample_unit": "frame"}, "best": "association"}]
    config = config_from_dict(small_config(tiny_gpt2, tmp_path / "shapes", max_steps=1, eval_every=1,
                                           eval__benchmarks=shapes, eval__perplexity=False,
                                           eval__general_perplexity=False))
    assert run_training(config)["metrics"][-1]["step"] == 1  # a frame holds both kinds: the criterion is read
