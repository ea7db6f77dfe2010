"""Config loading: types, validation messages naming the key, overrides, shipped configs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from queerbias.errors import QueerbiasError
from queerbias.train.config import load_config, save_config

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    return path


BASE = "model: some/model\ndata:\n  train: corpora/demo\n"


@pytest.mark.parametrize("text, key", [
    (BASE + "learning_rat: 0.1\n", "'learning_rat' is unknown"),
    (BASE.replace("  train:", "  trian:"), "'data.trian' is unknown"),
    (BASE + "batch_size: eight\n", "'batch_size' must be an integer"),
    (BASE + "batch_size: 0\n", "'batch_size' must be at least 1"),
    (BASE + "method: qlora\n", "'method' must be one of"),
    (BASE + "lora:\n  r: 0\n", "'lora.r' must be at least 1"),
    (BASE + "eval:\n  benchmarks:\n    - suite: nope\n", "'eval.benchmarks[0].suite' must be one of"),
    (BASE + "merge: true\nmethod: full\n", "'merge' only applies"),
    ("data:\n  train: x\n", "'model' is required"),
    (BASE + "mlm_probability: 1.5\n", "'mlm_probability' must be between"),
])
def test_bad_config_names_the_key(tmp_path, text, key):
    with pytest.raises(QueerbiasError, match=key.replace("[", r"\[").replace("]", r"\]")):
        load_config(write(tmp_path, text))


def test_overrides_and_yaml_floats(tmp_path):
    config = load_config(write(tmp_path, BASE + "learning_rate: 2e-5\n"),
                         ["lora.r=4", "data.max_length=128", "merge=true", "eval.benchmarks=[{suite: gruff}]"])
    assert config.learning_rate == 2e-5  # YAML 1.1 reads 2e-5 as a string
    assert (config.lora.r, config.data.max_length, config.merge) == (4, 128, True)
    assert [(b.suite, b.sample) for b in config.eval.benchmarks] == [("gruff", 200)]
    assert config.output_dir == str(Path("runs/train/c"))
    with pytest.raises(QueerbiasError, match="'lora.rank' is unknown"):
        load_config(write(tmp_path, BASE), ["lora.rank=4"])
    with pytest.raises(QueerbiasError, match="key=value"):
        load_config(write(tmp_path, BASE), ["lora.r"])


def test_saved_config_round_trips(tmp_path):
    config = load_config(write(tmp_path, BASE), ["seed=3"])
    save_config(config, tmp_path / "saved.yaml")
    again = load_config(tmp_path / "saved.yaml")
    assert again == config


@pytest.mark.parametrize("name", ["seed-study-bert", "seed-study-bloom", "lora-gemma",
                                  "demo-gemma-lora"])
def test_shipped_configs_load(name):
    config = load_config(REPO / "configs" / f"{name}.yaml")
    assert config.model and config.data.train


def test_seed_study_settings():
    bert = load_config(REPO / "configs" / "seed-study-bert.yaml")
    bloom = load_config(REPO / "configs" / "seed-study-bloom.yaml")
    for config in (bert, bloom):
        assert (config.epochs, config.learning_rate, config.grad_accum, config.eval_every,
                config.method) == (3.0, 2e-5, 10, 500, "full")
    assert (bert.batch_size, bloom.batch_size) == (8, 4)


def test_accelerate_configs_are_yaml():
    for path in (REPO / "configs" / "accelerate").glob("*.yaml"):
        assert "distributed_type" in yaml.safe_load(path.read_text())
