"""Study files: the shipped ones load and plan offline; exclusions; what --force deletes.

The refusals of bad study files are rows of tests/test_bad_inputs.py (the study block)."""

from __future__ import annotations

import fcntl

import pytest
import yaml

from queerbias.errors import QueerbiasError
from queerbias.study.cells import BASE_DIR, LOCK_FILE, planned, prepare
from queerbias.study.config import load_study

from .helpers import REPO, study_config, write_study

SEED_STUDY_MODELS = {  # the paper's names (Tables 6 and 7) -> Hub id, kind
    "bloom-560m": ("bigscience/bloom-560m", "causal"), "german_bert": ("google-bert/bert-base-german-cased", "masked"),
    "gpt2": ("openai-community/gpt2", "causal"), "multi_bert": ("google-bert/bert-base-multilingual-cased", "masked"),
    "opt-350m": ("facebook/opt-350m", "causal"), "xlm-clm": ("FacebookAI/xlm-clm-ende-1024", "causal"),
    "xlm-mlm": ("FacebookAI/xlm-mlm-ende-1024", "masked"), "xlm-roberta": ("FacebookAI/xlm-roberta-base", "masked"),
}


def test_seed_study_file_names_its_eight_models_and_loads_offline_with_tiny_ones(tiny_bert, tiny_gpt2, tmp_path,
                                                                                 monkeypatch):
    monkeypatch.chdir(REPO)  # the study's training config path is relative to the checkout
    study = load_study(REPO / "configs/study-seed.yaml", output_dir=str(tmp_path / "STUDY"))
    assert {name: model.config for name, model in study.models.items()} == \
        {name: hub for name, (hub, _) in SEED_STUDY_MODELS.items()}
    raw = yaml.safe_load((REPO / "configs/study-seed.yaml").read_text())
    for name, (_, kind) in SEED_STUDY_MODELS.items():  # the same file, every model a tiny one of its kind
        entry = raw["models"][name]
        tiny = str(tiny_gpt2 if kind == "causal" else tiny_bert)
        raw["models"][name] = {**entry, "model": tiny} if isinstance(entry, dict) else tiny
    raw["output_dir"] = str(tmp_path / "STUDY")
    cells = prepare(load_study(write_study(tmp_path / "seed.yaml", raw)))
    assert len(cells) == 8 * 3 and {c.benchmarks for c in cells} == {("winoqueer-de", "survey")}
    bloom = yaml.safe_load((tmp_path / "STUDY/runs/bloom-560m/lm/seed-2/study-cell.yaml").read_text())
    assert (bloom["examples_per_device"], bloom["data"]["packing"], bloom["method"], bloom["seed"]) == (4, False, "full", 2)
    assert bloom["eval"]["base_from"] == str(tmp_path / "STUDY" / BASE_DIR / "bloom-560m")


def test_mitigation_study_file_plans_every_method_over_three_seeds(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    cells = prepare(load_study(REPO / "configs/study-mitigation-gemma.yaml", output_dir=str(tmp_path / "STUDY")))
    assert [(c.run, c.seed) for c in cells] == [(r, s) for s in (0, 1, 2) for r in ("lm", "targeted", "cda",
                                                                                       "equalise", "dpo",
                                                                                       "equalise-clp",
                                                                                       "equalise-clp-anchor")]
    assert cells[0].benchmarks == ("bias-frame-disjoint", "bias-ood-en", "ood-de-plural", "ood-de-names", "ood-fr",
                                   "ood-es", "bias-ood-winoqueer-de", "knowledge", "neutral")
    dpo = yaml.safe_load((tmp_path / "STUDY/runs/gemma-3-270m/dpo/seed-1/study-cell.yaml").read_text())
    assert dpo["objective"] == "dpo" and dpo["pairs"]["train"] == "queerbias-de:train?by=frame+template"
    clp = yaml.safe_load((tmp_path / "STUDY/runs/gemma-3-270m/equalise-clp/seed-2/study-cell.yaml").read_text())
    # the frames set split like the strict split's templates: no training predicate is judged on
    assert clp["pairs"]["train"] == "queerbias-de-frames:train?by=template&seed=1" and clp["equalise"]["clp_term"] == 10
    anchored = yaml.safe_load((tmp_path / "STUDY/runs/gemma-3-270m/equalise-clp-anchor/seed-0/study-cell.yaml")
                              .read_text())
    assert anchored["equalise"] == {**clp["equalise"], "anchor_term": 10.0}


def test_exclude_leaves_out_what_makes_no_sense(tmp_path):
    config = study_config(tmp_path / "STUDY", {"bert": "a-masked-model", "gpt2": "a-causal-model"},
                          runs={"lm": {"overrides": {"objective": "lm"}},
                                "dpo": {"overrides": {"objective": "dpo", "pairs": {"train": "queerbias-de:train"}}}},
                          exclude=[{"model": "bert", "run": "dpo"}, {"run": "lm", "seed": 1}])
    cells = planned(load_study(write_study(tmp_path / "s.yaml", config)))
    assert [c.name for c in cells] == ["bert/lm/seed-0", "gpt2/lm/seed-0", "gpt2/dpo/seed-0", "gpt2/dpo/seed-1"]


def test_a_started_cell_whose_training_config_changed_is_refused_and_force_deletes_it(tmp_path):
    run_config = tmp_path / "lm.yaml"
    run_config.write_text("objective: lm\nweight_decay: 0.01\n")
    config = study_config(tmp_path / "STUDY", {"gpt2": "some/model"}, seeds=[0], runs={"lm": str(run_config)})
    study = load_study(write_study(tmp_path / "s.yaml", config))
    cell = prepare(study)[0]
    (cell.folder / "config.yaml").write_text("model: some/model\n")  # the runner started it
    run_config.write_text("objective: lm\nweight_decay: 0.5\n")  # the study file is the same
    with pytest.raises(QueerbiasError, match="study cell gpt2/lm/seed-0 was started with another training config "
                                             r"\(differs in weight_decay\); pass --force"):
        prepare(study)
    prepare(study, force=True)
    assert not (cell.folder / "config.yaml").exists()
    assert yaml.safe_load(cell.config_file.read_text())["weight_decay"] == 0.5


def test_an_option_added_later_at_its_default_changes_no_cell_and_a_running_cell_is_never_deleted(tmp_path):
    config = study_config(tmp_path / "STUDY", {"gpt2": "some/model"}, seeds=[0])
    study = load_study(write_study(tmp_path / "s.yaml", config))
    cell = next(c for c in prepare(study) if c.run == "equalise")
    (cell.folder / "config.yaml").write_text("model: some/model\n")  # the runner started it
    earlier = yaml.safe_load(cell.config_file.read_text())  # as a version without two options wrote it
    del earlier["equalise"]["anchor_term"]
    for bench in earlier["eval"]["benchmarks"]:
        del bench["guard"]
    cell.config_file.write_text(yaml.safe_dump(earlier, sort_keys=False))
    prepare(study)  # not refused: the new options sit at their defaults
    earlier["equalise"]["clp_term"] = 3.0  # a value that did change
    cell.config_file.write_text(yaml.safe_dump(earlier, sort_keys=False))
    with pytest.raises(QueerbiasError, match=r"differs in equalise\); pass --force"):
        prepare(study)
    with open(cell.folder / LOCK_FILE, "a") as lock:  # a study process is running the cell
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(QueerbiasError, match="another process is running it; nothing was deleted"):
            prepare(study, force=True)
    assert (cell.folder / "config.yaml").is_file()
    earlier["equalise"]["anchor_term"] = 1.0  # a new option away from its default is a change
    earlier["equalise"]["clp_term"] = 0.0
    cell.config_file.write_text(yaml.safe_dump(earlier, sort_keys=False))
    with pytest.raises(QueerbiasError, match=r"differs in equalise\)"):
        prepare(study)


def test_force_runs_another_study_in_the_folder_without_its_base_evaluations(tmp_path):
    config = study_config(tmp_path / "STUDY", {"gpt2": "some/model"}, seeds=[0])
    prepare(load_study(write_study(tmp_path / "s.yaml", config)))
    (tmp_path / "STUDY" / BASE_DIR / "gpt2").mkdir(parents=True)
    changed = load_study(write_study(tmp_path / "s.yaml", {**config, "seeds": [0, 1]}))
    with pytest.raises(QueerbiasError, match=r"holds a study made by another config \(differs in seeds\)"):
        prepare(changed)
    assert len(prepare(changed, force=True)) == 4
    assert (tmp_path / "STUDY" / BASE_DIR / "gpt2").is_dir()  # more seeds: the base evaluations still hold
    assert load_study(tmp_path / "STUDY/study.yaml").same_study(changed)
    other = load_study(write_study(tmp_path / "s.yaml", {**config, "seeds": [0, 1], "benchmarks": [
        {**config["benchmarks"][0], "sample": 7}, *config["benchmarks"][1:]]}))
    with pytest.raises(QueerbiasError, match=r"differs in benchmarks"):
        prepare(other)
    prepare(other, force=True)
    assert not (tmp_path / "STUDY" / BASE_DIR).exists()  # other benchmarks: the base is scored again
