"""The mitigation objectives end to end on tiny models: held-out guard, records, resume, errors."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
import yaml
from safetensors.torch import load_file

from queerbias.pairs.queerbias_de import preference_triples
from queerbias.pairs.resolve import load_pairs
from queerbias.train.config import config_from_dict
from queerbias.train.runner import run_training

from .helpers import logged_losses, small_config

HELD_OUT = [{"suite": "pairs", "data": "queerbias-de:test", "sample": 12}]
OBJECTIVES = {
    "cda": {},
    "equalise": {"pairs__train": "queerbias-de:train", "equalise__pairs_per_batch": 8,
                 "equalise__group_term": 1.0},
    "dpo": {"pairs__train": "queerbias-de:train", "examples_per_device": 2},
}


def objective_config(model, out, objective, **overrides) -> dict:
    return small_config(model, out, **{"objective": objective, "eval__benchmarks": HELD_OUT,
                                       **OBJECTIVES[objective], **overrides})


@pytest.mark.parametrize("objective", sorted(OBJECTIVES))
def test_resume_from_a_checkpoint_ends_as_an_uninterrupted_run(objective, tiny_llama, tmp_path):
    """A rerun after a kill past checkpoint-2 (simulated: what came after it removed) resumes
    there and ends with the adapter and losses of the uninterrupted run."""
    config = objective_config(tiny_llama, tmp_path / "run", objective)
    whole = run_training(config_from_dict(config))
    losses = logged_losses(tmp_path / "run" / "checkpoint-4")
    adapter = load_file(whole["final"] / "adapter_model.safetensors")
    for leftover in ("checkpoint-4", "final", "compare"):
        shutil.rmtree(tmp_path / "run" / leftover)
    resumed = run_training(config_from_dict(config))
    assert logged_losses(tmp_path / "run" / "checkpoint-4") == losses
    again = load_file(resumed["final"] / "adapter_model.safetensors")
    assert again.keys() == adapter.keys() and all(torch.equal(again[k], adapter[k]) for k in again)
    assert [m["step"] for m in resumed["metrics"]] == [0, 2, 4]
    summary = json.loads((tmp_path / "run" / "checkpoint-4" / "bias" / "summary.json").read_text())
    assert summary["meta"]["objective"] == objective
    assert summary["meta"]["data"]["name"].startswith("queerbias-de:test[sample 12")
    assert summary["meta"]["general_perplexity"] > 1


def test_cda_records_its_counts_in_config_and_metrics(tiny_bert, tmp_path):
    result = run_training(config_from_dict(objective_config(tiny_bert, tmp_path / "run", "cda",
                                                            max_steps=2, eval_every=2)))
    record = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())["record"]
    counts = record["corpus"]["cda"]
    assert counts["two_sided"] and counts["swapped_documents"] > 0
    assert record["corpus"]["training_documents"] == record["corpus"]["documents"] + counts["swapped_documents"]
    assert counts["terms_per_group"]["gay"] >= counts["documents_per_group"]["gay"] > 0
    assert all(line["corpus"] == record["corpus"] for line in result["metrics"])


def test_targeted_identities_are_recorded(tiny_llama, tmp_path):
    result = run_training(config_from_dict(small_config(
        tiny_llama, tmp_path / "run", max_steps=2, eval_every=2, data__identities=["transgender"])))
    corpus = result["metrics"][0]["corpus"]
    assert 0 < corpus["targeted_documents"] < corpus["documents"]
    summary = json.loads((tmp_path / "run" / "checkpoint-2" / "bias" / "summary.json").read_text())
    assert summary["meta"]["targeted_groups"] == ["transgender"]


def test_equalise_on_a_masked_lm(tiny_bert, tmp_path):
    result = run_training(config_from_dict(objective_config(tiny_bert, tmp_path / "run", "equalise",
                                                            max_steps=2, eval_every=2)))
    state = json.loads((tmp_path / "run" / "checkpoint-2" / "trainer_state.json").read_text())
    assert all(entry["pair_loss"] >= 0 for entry in state["log_history"] if "loss" in entry)
    assert result["metrics"][-1]["held_out"]["shared_sentences"] == {"bias": 0}


def test_allowed_overlap_is_recorded_in_every_summary(tiny_llama, tmp_path):
    run_training(config_from_dict(small_config(
        tiny_llama, tmp_path / "run", objective="equalise", max_steps=1, eval_every=1,
        pairs__train="queerbias-de:train", equalise__pairs_per_batch=4, pairs__allow_overlap=True,
        eval__benchmarks=[{"suite": "pairs", "data": "queerbias-de", "sample": 200}])))
    for folder in ("base", "checkpoint-1"):
        meta = json.loads((tmp_path / "run" / folder / "bias" / "summary.json").read_text())["meta"]
        assert meta["held_out"]["allow_overlap"] is True
        assert meta["held_out"]["shared_sentences"]["bias"] > 0


def test_mitigation_evaluates_the_held_out_split_by_default(tiny_llama, tmp_path):
    result = run_training(config_from_dict(objective_config(
        tiny_llama, tmp_path / "run", "cda", max_steps=1, eval_every=1,
        eval__benchmarks=[{"suite": "pairs", "sample": 10}])))
    assert result["metrics"][0]["benchmarks"]["bias"]["data"] == "queerbias-de:test"


def test_mitigation_reports_out_of_distribution_pairs_by_default(tmp_path):
    config = config_from_dict({"model": "m", "data": {"train": "corpora/demo"}, "objective": "cda"})
    assert config.benchmark_dirs() == ["bias", "bias-ood-en", "bias-ood-winoqueer-de"]
    assert [(b.data, b.optional) for b in config.eval.benchmarks] == [
        ("queerbias-de:test", False), ("winoqueer-v0", True), ("winoqueer-de", True)]
    plain = config_from_dict({"model": "m", "data": {"train": "corpora/demo"}})
    assert [(b.data, b.sample) for b in plain.eval.benchmarks] == [(None, 200)]


def test_optional_benchmark_without_local_data_is_skipped(tiny_llama, tmp_path, monkeypatch):
    monkeypatch.setenv("QUEERBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("QUEERBIAS_SHARED_DATA", str(tmp_path / "nothing"))
    benchmarks = [*HELD_OUT, {"suite": "pairs", "data": "winoqueer-v0", "sample": 10,
                              "name": "bias-ood-en", "optional": True}]
    result = run_training(config_from_dict(objective_config(
        tiny_llama, tmp_path / "run", "cda", max_steps=1, eval_every=1, eval__benchmarks=benchmarks)))
    assert set(result["metrics"][-1]["benchmarks"]) == {"bias"}
    assert result["metrics"][0]["skipped_benchmarks"] == ["bias-ood-en"]


def test_out_of_distribution_pairs_from_the_shared_data(tiny_llama, shared_data, tmp_path, monkeypatch):
    monkeypatch.setenv("QUEERBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("QUEERBIAS_SHARED_DATA", str(shared_data))
    benchmarks = [*HELD_OUT, {"suite": "pairs", "data": "winoqueer-v0", "sample": 10, "name": "bias-ood-en",
                              "optional": True, "options": {"identical": "drop"}}]
    result = run_training(config_from_dict(objective_config(
        tiny_llama, tmp_path / "run", "cda", max_steps=1, eval_every=1, eval__benchmarks=benchmarks)))
    ood = result["metrics"][-1]["benchmarks"]["bias-ood-en"]
    assert ood["data"] == "winoqueer-v0" and ood["distance"]["bias"] is not None
    assert (tmp_path / "run" / "compare" / "bias-ood-en" / "delta.json").is_file()


def test_preference_triples_cut_the_stereotype_at_the_identity():
    pairs = load_pairs("queerbias-de:train")
    by_id = {p.pair_id: p for p in pairs.pairs}
    triples = preference_triples(set(by_id))
    assert len(triples) > len(pairs) / 2
    for triple in triples:
        pair = by_id[triple["pair_id"]]
        assert triple["prompt"] + triple["rejected"] == pair.sent_more
        assert triple["chosen"] != triple["rejected"] and triple["chosen"].endswith(".")
        assert triple["chosen"].startswith(" ") and not triple["prompt"].endswith(" ")
    assert not any(t["prompt"].startswith("Ehrlich gesagt") for t in triples)  # verb before identity
