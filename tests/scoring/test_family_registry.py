"""The model family is one object (issue 47): nothing outside the registry compares a family's name, and a
new family is the registry's entry plus one file (`toy_family.py`), which models, scoring, the pair suite,
the CLI and training configs then ask."""

from __future__ import annotations

import ast
import csv
from pathlib import Path

import pytest

import queerbias
from queerbias import families
from queerbias.cli import main
from queerbias.models import load_model
from queerbias.scoring.scorer import make_scorer

ROOT = Path(queerbias.__file__).parent
NAMES = {families.MASKED, families.CAUSAL}


def _compared(tree: ast.AST) -> list[int]:
    """Lines comparing a family's name (`kind == "masked"`, `kind in (MASKED, ...)`) or keying a table by it."""
    def is_name(node) -> bool:
        return (isinstance(node, ast.Constant) and node.value in NAMES) or \
            (isinstance(node, (ast.Name, ast.Attribute)) and getattr(node, "id", getattr(node, "attr", "")) in
             {"MASKED", "CAUSAL"})

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            found += [node.lineno for operand in operands for inner in ast.walk(operand) if is_name(inner)][:1]
        elif isinstance(node, ast.Dict) and any(key is not None and is_name(key) for key in node.keys):
            found.append(node.lineno)
    return found


def test_no_family_name_is_compared_outside_the_registry():
    compared = [f"{path.relative_to(ROOT)}:{line}" for path in ROOT.rglob("*.py") if path.name != "families.py"
                for line in _compared(ast.parse(path.read_text(encoding="utf-8")))]
    assert compared == []


def test_the_check_sees_a_comparison():
    assert _compared(ast.parse('if lm.kind == "masked":\n    pass\nx = kind in (CAUSAL,)\ny = {"causal": 1}\n')) \
        == [1, 3, 4]


@pytest.fixture
def toy(monkeypatch):
    """The one registry entry (in the package: a line in queerbias/families.py)."""
    monkeypatch.setitem(families.REGISTRY, "toy", "toy_family:ToyFamily")
    import toy_family

    toy_family.ENCODED.clear()
    return toy_family


def test_a_toy_family_is_the_registry_entry_and_one_file(toy, tiny_gpt2, tmp_path):
    assert "toy" in families.names()
    out = tmp_path / "run"
    assert main(["score", "--model", str(tiny_gpt2), "--kind", "toy", "--force-kind", "--pairs",
                 "queerbias-de", "--sample", "6", "--out", str(out), "--no-progress"]) == 0
    assert toy.ENCODED  # the pair suite's screen and the scorer tokenised through the toy
    with open(out / "pairs.csv", newline="", encoding="utf-8") as handle:
        assert len(list(csv.DictReader(handle))) == 6
    lm = load_model(str(tiny_gpt2), kind="toy", force_kind=True)
    assert lm.kind == "toy" and type(make_scorer(lm)).__name__ == "ToyScorer"
    collator = families.get_family("toy").collator(lm.tokenizer, False, 0.15, False)
    assert collator([{"input_ids": [5, 6, 7]}])["labels"].tolist() == [[5, 6, 7]]


def test_a_training_config_takes_every_registered_family_and_no_other(toy, tmp_path):
    from queerbias.errors import QueerbiasError
    from queerbias.train.config import config_from_dict
    from train.helpers import small_config

    assert config_from_dict(small_config("no-model-needed", tmp_path / "run", kind="toy")).kind == "toy"
    with pytest.raises(QueerbiasError, match="config key 'kind' must be one of masked, causal, toy, got 'seq'"):
        config_from_dict(small_config("no-model-needed", tmp_path / "run", kind="seq"))
