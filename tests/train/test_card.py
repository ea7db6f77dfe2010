"""The model card a training run writes (RUN/final/README.md), read back with huggingface_hub."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from huggingface_hub import ModelCard

from queerbias.cli import main
from queerbias.comparison.checkpoints import run_verdict
from queerbias.comparison.compare import best_checkpoint, write_outputs
from queerbias.train.card import CONFIG_FILE, base_model
from queerbias.train.checkpoints import record_verdict


def _card(run):
    return ModelCard.load(run / "final" / "README.md")


def test_card_parses_and_its_model_index_is_the_compare_report(llama_run):
    _, result = llama_run
    run = result["run_dir"]
    card = _card(run)
    data = card.data
    assert data.library_name == "peft" and data.get("base_model") is None  # a local base has no Hub id
    assert {"bias-mitigation", "queerbias", "lora", "continued-pretraining"} <= set(data.tags)
    assert data.license == "unknown" and data.language == ["de"] and data.pipeline_tag == "text-generation"

    delta = json.loads((run / "compare" / "bias" / "delta.json").read_text())
    final = max(delta["comparisons"], key=lambda c: c["after"]["step"])
    assert final["after"]["step"] == 4
    expected = {}
    for metric, part, measure in (("bias_score", "overall", "bias"), ("soft_score", "overall", "soft"),
                                  ("distance_to_indifference_bias", "distance", "bias"),
                                  ("distance_to_indifference_soft", "distance", "soft")):
        expected[metric] = final[part][f"{measure}_after"]
        expected[metric + "_base"] = final[part][f"{measure}_before"]
    assert {r.metric_type: r.metric_value for r in data.eval_results} == expected
    assert {(r.task_type, r.dataset_type, r.dataset_revision) for r in data.eval_results} == {
        ("bias-evaluation", "queerbias-de", delta["meta"]["data"]["checksum"])}
    assert data.model_name == "run"
    # the body's table is the same comparison, per group and overall, with the distance row
    overall = final["overall"]
    assert f"| Overall | {overall['n']} | {overall['bias_before']:.2f} | {overall['bias_after']:.2f} |" in card.text
    assert "| Distance to indifference | " in card.text and "## Limitations" in card.text
    assert "DATASHEET.md" in card.text  # the demo corpus's datasheet is linked
    # harm on every pair benchmark, each group with its before and after; the floor beside the distance
    direction, groups = final["direction"], final["direction"]["groups"]
    line = next(text for text in card.text.splitlines() if text.startswith("harm on every pair benchmark"))
    assert line.startswith("harm on every pair benchmark: bias: ") and "crossed 50 towards the stereotype: " in line
    assert all(f"{group} ({groups[group]['bias_before']:.1f} -> {groups[group]['bias_after']:.1f})" in line
               for group in direction["crossed"] + direction["harmful"])
    assert f"Its coin-flip floor for these group sizes is {final['distance']['floor']:.2f}" in card.text


def test_card_command_writes_the_same_card_again(llama_run, tmp_path, capsys):
    _, result = llama_run
    path = result["run_dir"] / "final" / "README.md"
    written = path.read_bytes()
    assert main(["card", str(result["run_dir"])]) == 0
    assert path.read_bytes() == written
    assert main(["card", str(result["run_dir"]), "--out", str(tmp_path / "card.md")]) == 0
    assert ModelCard.load(tmp_path / "card.md").data.to_dict() == _card(result["run_dir"]).data.to_dict()
    assert "evaluation incomplete" not in capsys.readouterr().out


def test_unfinished_run_gets_a_card_that_says_so(llama_run, tmp_path, capsys):
    """A run killed before its compare report: no model-index, no before/after table, the reason named."""
    _, result = llama_run
    killed = tmp_path / "killed"
    shutil.copytree(result["run_dir"], killed, ignore=shutil.ignore_patterns("compare", "final", "merged"))
    assert main(["card", str(killed)]) == 0
    assert "evaluation incomplete" in capsys.readouterr().out
    card = _card(killed)
    assert card.data.eval_results is None and "model-index" not in card.data.to_dict()
    assert "Evaluation incomplete" in card.text and "no compare report (compare/bias/delta.json)" in card.text
    assert "final/ holds no trained weights" in card.text
    assert "| Overall |" not in card.text and "Distance to indifference |" not in card.text


def test_not_a_run_is_refused(tmp_path, capsys):
    assert main(["card", str(tmp_path)]) == 2
    assert f"not a training run (no {CONFIG_FILE})" in capsys.readouterr().err


def test_config_file_is_the_runners():
    from queerbias.train.runner import CONFIG_NAME

    assert CONFIG_FILE == CONFIG_NAME


@pytest.mark.parametrize(("spec", "revision", "recorded", "hub_id", "licence"), [
    ("embedded:gemma-3-270m", None, True, "google/gemma-3-270m", "gemma"),
    ("EleutherAI/pythia-70m", "a" * 40, True, "EleutherAI/pythia-70m", None),
    ("EleutherAI/pythia-70m", None, False, "EleutherAI/pythia-70m", None),  # no benchmark recorded the load
    ("models/local", None, True, None, None),  # loaded from a folder: no revision
    ("/abs/folder", None, False, None, None),
])
def test_base_model_hub_id_and_licence(spec, revision, recorded, hub_id, licence):
    base = base_model(spec, revision, recorded)
    assert (base.hub_id, base.licence) == (hub_id, licence)
    if spec.startswith("embedded:"):
        assert "not the original weights" in base.note and "Q4_K_M" in base.note


def test_a_mitigation_runs_record_reaches_the_card(llama_run, tmp_path):
    """The keys a mitigation run adds to config.yaml (objective, its settings, `record`) as the card reads them."""
    import yaml

    _, result = llama_run
    run = tmp_path / "equalise"
    shutil.copytree(result["run_dir"], run)
    config = yaml.safe_load((run / CONFIG_FILE).read_text())
    config |= {"objective": "equalise", "pairs": {"train": "queerbias-de:train"},
               "equalise": {**config["equalise"], "pairs_per_batch": 8},
               "record": {"objective": "equalise", "skipped_benchmarks": ["bias-ood"],
                          "held_out": {"train_pairs": "queerbias-de:train", "n_train_pairs": 120,
                                       "train_checksum": "sha256:abc", "allow_overlap": False,
                                       "shared_sentences": {"bias": 0}}}}
    (run / CONFIG_FILE).write_text(yaml.safe_dump(config, sort_keys=False))  # as the runner writes it
    assert main(["card", str(run)]) == 0
    card = _card(run)
    assert "equalising-loss" in card.data.tags
    assert "held out: no sentence in common with the training pairs" in card.text
    assert "- `pairs`: train queerbias-de:train\n" in card.text and "pairs_per_batch 8" in card.text
    assert "Training pairs: `queerbias-de:train` (120 pairs" in card.text
    assert "Not evaluated, as their data was not on the training machine: bias-ood." in card.text


def _first_paragraph(card: Path) -> str:
    """The paragraph under the card's title: what a reader of the Hub page sees first."""
    return card.read_text().split("\n\n# run\n\n", 1)[1].split("\n\n")[0]


def test_an_unguarded_runs_card_opens_with_the_checkpoint_compare_chose(llama_run):
    _, result = llama_run
    best = json.loads((result["run_dir"] / "compare" / "bias" / "delta.json").read_text())["best"]
    first = _first_paragraph(result["run_dir"] / "final" / "README.md")
    assert first.startswith(f"Compare chose {best['label']} on `bias` by its criterion `closest50` "
                            f"({best['criterion_description']}); ")
    assert first.endswith("No guard benchmark checked this run, so nothing refused a checkpoint.")


REASON = "bias: stereotype excess rose 10.00 -> 12.00 (allowed +0)"


@pytest.mark.parametrize(("steps", "opening"), [
    ((2, 4), f"**This adapter was refused by its guards: at step 2, {REASON}; at step 4, {REASON}, so it is not a "
             "mitigation to use.** Its training run checked every saved checkpoint against its guards (`bias`)"),
    ((4,), f"**The weights in this folder (the last checkpoint, step 4) were refused by its guards: {REASON}, so "
           "they are not a mitigation to use.**"),
    ((2,), "Compare chose step-4 on `bias` by its criterion `closest50` "),
])
def test_the_cards_first_paragraph_is_the_runs_verdict(llama_run, tmp_path, steps, opening):
    """A run whose guards refused it says so first, in words a Hub reader understands, and `grep` finds it in
    the card and in delta.json; otherwise the card says which checkpoint compare chose and where it is. The
    verdict goes where the runner puts it (delta.json, metrics.jsonl's last line) by the runner's writers."""
    _, result = llama_run
    run = shutil.copytree(result["run_dir"], tmp_path / "run")
    document = json.loads((run / "compare" / "bias" / "delta.json").read_text())
    refused = dict.fromkeys(steps, REASON)
    document["best"] = best_checkpoint(document, "closest50", 5.0, refused)
    verdict = run_verdict({"bias": document}, {"bias": 0.0}, refused)
    document |= {"verdict": verdict, "refused": {str(step): why for step, why in refused.items()}}
    write_outputs(document, run / "compare" / "bias")
    record_verdict(run, verdict, document["refused"])
    assert main(["card", str(run)]) == 0
    first = _first_paragraph(run / "final" / "README.md")
    assert first.startswith(opening)
    found = [path.name for path in (run / "final" / "README.md", run / "compare" / "bias" / "delta.json",
                                    run / "metrics.jsonl") if "not a mitigation to use" in path.read_text()]
    if steps == (2,):
        assert found == [] and first.endswith(f"They passed the last checkpoint (step 4) and refused step 2: {REASON}.")
        assert "its weights are the ones here" in first
    else:
        assert found == ["README.md", "delta.json", "metrics.jsonl"]
    if steps == (4,):
        assert "Compare chose step-2 on `bias`" in first and "its weights are in the run's `checkpoint-2/`" in first
