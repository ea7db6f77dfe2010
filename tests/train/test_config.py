"""Config loading: types, validation messages naming the key, overrides, shipped configs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from queerbias.errors import QueerbiasError
from queerbias.train.config import load_config, save_config
from queerbias.train.objectives.equalise.config import EqualiseConfig

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    return path


BASE = "model: some/model\ndata:\n  train: corpora/demo\n"


@pytest.mark.parametrize("text, key", [
    (BASE + "learning_rat: 0.1\n", "'learning_rat' is unknown"),
    (BASE.replace("  train:", "  trian:"), "'data.trian' is unknown"),
    (BASE + "examples_per_device: eight\n", "'examples_per_device' must be an integer"),
    (BASE + "examples_per_device: 0\n", "'examples_per_device' must be at least 1"),
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
    assert (bert.examples_per_device, bloom.examples_per_device) == (8, 4)


def test_accelerate_configs_are_yaml():
    for path in (REPO / "configs" / "accelerate").glob("*.yaml"):
        assert "distributed_type" in yaml.safe_load(path.read_text())


def test_reading_a_config_imports_neither_torch_nor_transformers(tmp_path):
    """Issue 33: a config is checked in plain Python (a study checks every cell's before any runs); only
    `check_installed`, which a run calls first, asks transformers (scheduler names, integrations)."""
    import subprocess
    import sys

    path = write(tmp_path, BASE + "objective: equalise\npairs:\n  train: queerbias-de:train\n")
    code = (f"import sys; from queerbias.train.config import load_config; load_config({str(path)!r}); "
            "print(sorted({'torch', 'transformers', 'pandas'} & set(sys.modules)))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=REPO).stdout.strip() == "[]"


def test_a_mistyped_key_is_named_with_the_closest_one(tmp_path):
    with pytest.raises(QueerbiasError, match=r"config key 'learning_rat' is unknown; did you mean 'learning_rate'\?"):
        load_config(write(tmp_path, BASE + "learning_rat: 0.1\n"))
    with pytest.raises(QueerbiasError, match=r"config key 'equalize' is unknown; did you mean 'equalise'\?"):
        load_config(write(tmp_path, BASE + "equalize:\n  weight: 2\n"))
    with pytest.raises(QueerbiasError, match=r"config key 'equalise.wieght' is unknown; did you mean 'weight'\?"):
        load_config(write(tmp_path, BASE + "equalise:\n  wieght: 2\n"))


def test_the_train_command_refuses_a_typo_before_torch_loads(tmp_path):
    """Issue 33: `queerbias train` (and `train/finetune.py`, which calls it) reads the config before it
    imports the trainer, so a typo is one line in about a second, not after torch's imports
    (bench/config_typo.py times it)."""
    import subprocess
    import sys

    path = write(tmp_path, BASE + "learning_rat: 0.1\n")
    code = (f"import sys; from queerbias.cli import main; status = main(['train', '--config', {str(path)!r}]); "
            "print(status, sorted({'torch', 'transformers', 'peft'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert done.stdout.strip() == "2 []" and "did you mean 'learning_rate'?" in done.stderr


def test_each_objective_section_is_its_own_typed_class(tmp_path):
    """The trainer receives the section its objective declares (`TrainerSetup[EqualiseConfig]`), not a
    dataclass made at run time; the YAML and the saved config keep one key per objective."""
    from queerbias.train.objectives.cda.config import CdaConfig
    from queerbias.train.objectives.equalise.objective import EqualiseObjective

    config = load_config(write(tmp_path, BASE + "objective: equalise\npairs:\n  train: queerbias-de:train\n"
                               "equalise:\n  weight: 2.5\ncda:\n  augment: true\n"))
    assert type(config.section(EqualiseConfig)) is EqualiseConfig and config.section(EqualiseConfig).weight == 2.5
    assert EqualiseObjective().settings(config) is config.section(EqualiseConfig)
    assert config.section(CdaConfig).augment is True
    saved = config.to_dict()
    assert "sections" not in saved and saved["equalise"]["weight"] == 2.5
    assert list(saved)[-4:] == ["cda", "equalise", "dpo", "contrast"]  # the registry's order


def test_the_lexicon_is_a_data_setting_and_the_old_key_still_reads(tmp_path, caplog):
    """`cda.lexicon` moved to `data.lexicon` (targeting reads it as much as cda): a config or a saved run
    that names the old key reads as before, with a warning for a config written by hand."""
    lexicon = str(REPO / "src/queerbias/data/cda/lexicon_de.yaml")
    with caplog.at_level("WARNING"):
        config = load_config(write(tmp_path, BASE + f"cda:\n  lexicon: {lexicon}\n"))
    assert config.data.lexicon == lexicon and "'cda.lexicon' is now 'data.lexicon'" in caplog.text
    with pytest.raises(QueerbiasError, match="moved to 'data.lexicon'; give only the latter"):
        load_config(write(tmp_path, BASE.replace("  train: corpora/demo\n", f"  train: corpora/demo\n  lexicon: "
                                                 f"{lexicon}\n") + f"cda:\n  lexicon: {lexicon}\n"))


def test_the_batch_keys_say_their_unit_and_the_old_names_still_read(tmp_path, caplog):
    """The three batch sizes were all `batch_size` (corpus examples per device, equalise's pairs per micro-batch, the
    scorer's sentences), and equalise's pair-batch keys sat in the core `pairs` section: a config or a saved run
    that names them the old way reads as before, each with a warning for a config written by hand."""
    old = (BASE + "objective: equalise\nbatch_size: 2\npairs:\n  train: queerbias-de:train\n  batch_size: 16\n"
           "  balance: false\n  groups_per_batch: 4\neval:\n  batch_size: 64\n")
    with caplog.at_level("WARNING"):
        config = load_config(write(tmp_path, old))
    equalise = config.section(EqualiseConfig)
    assert (config.examples_per_device, config.eval.sequences_per_batch) == (2, 64)
    assert (equalise.pairs_per_batch, equalise.balance, equalise.groups_per_batch) == (16, False, 4)
    for moved in ("'batch_size' is now 'examples_per_device'", "'pairs.batch_size' is now 'equalise.pairs_per_batch'",
                  "'pairs.balance' is now 'equalise.balance'", "'pairs.groups_per_batch' is now 'equalise.groups_per_batch'",
                  "'eval.batch_size' is now 'eval.sequences_per_batch'"):
        assert moved in caplog.text
    assert "batch_size" not in str(config.to_dict())
    with pytest.raises(QueerbiasError, match="'pairs.batch_size' moved to 'equalise.pairs_per_batch'; give only the"):
        load_config(write(tmp_path, old + "equalise:\n  pairs_per_batch: 8\n"))
