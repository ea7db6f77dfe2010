"""Weights without safetensors: refused, or read safely, and the way they were read is recorded."""

from __future__ import annotations

import shutil
from dataclasses import dataclass

import pytest
import torch

from queerbias.errors import QueerbiasError
from queerbias.models import load_model
from queerbias.models.weights import (
    CONVERSION,
    CONVERSION_TITLE,
    CONVERTER,
    PICKLE,
    SAFETENSORS,
    locate_weights,
)


@pytest.fixture
def pickle_only(tiny_gpt2, tmp_path):
    """The tiny GPT-2 with its weights as pytorch_model.bin only, as older Hub checkpoints have them."""
    from transformers import AutoModelForCausalLM

    legacy = tmp_path / "legacy"
    shutil.copytree(tiny_gpt2, legacy)
    state = AutoModelForCausalLM.from_pretrained(tiny_gpt2).state_dict()
    for file in legacy.glob("*.safetensors"):
        file.unlink()
    torch.save(state, legacy / "pytorch_model.bin")
    return legacy


def test_pickled_weights_are_read_tensors_only_and_recorded(pickle_only, tiny_gpt2):
    with pytest.raises(QueerbiasError, match=r"only pickled PyTorch weights .*weights_only=True"):
        load_model(str(pickle_only))
    lm = load_model(str(pickle_only), allow_pickle_weights=True)
    assert lm.describe()["weights"] == {"format": "pytorch pickle (.bin)", "method": PICKLE}
    assert lm.fingerprint == load_model(str(tiny_gpt2)).fingerprint
    assert load_model(str(tiny_gpt2)).describe()["weights"]["method"] == SAFETENSORS


def test_a_pickle_that_runs_code_is_not_loaded(pickle_only, tmp_path):
    """torch.load(weights_only=True) refuses a pickle that would call a function on loading."""
    torch.save({"weights": torch.zeros(1), "payload": shutil.rmtree}, pickle_only / "pytorch_model.bin")
    with pytest.raises(QueerbiasError, match="holds more than tensors .*shutil.rmtree"):
        load_model(str(pickle_only), allow_pickle_weights=True)


@dataclass
class Discussion:
    num: int
    title: str
    author: str


class FakeHub:
    """The two Hub answers the loader asks for: a repository's files and its open pull requests."""

    def __init__(self, files, discussions=()):
        self.files, self.discussions = files, list(discussions)

    def list_repo_files(self, repo, revision=None):
        return self.files

    def get_repo_discussions(self, repo, discussion_type=None, discussion_status=None):
        return iter(self.discussions)


def test_hub_checkpoints_without_safetensors_use_the_hubs_conversion():
    bin_only = ["config.json", "pytorch_model.bin", "vocab.json"]
    assert locate_weights("org/new", None, False, FakeHub(["config.json", "model.safetensors"])).method == SAFETENSORS
    bot = Discussion(7, CONVERSION_TITLE, CONVERTER)
    source = locate_weights("FacebookAI/xlm-mlm-ende-1024", None, False,
                            FakeHub(bin_only, [Discussion(3, CONVERSION_TITLE, "someone"), bot]))
    assert (source.method, source.revision) == (CONVERSION, "refs/pr/7")
    assert source.load_options() == {"use_safetensors": True, "revision": "refs/pr/7"}
    assert source.describe() == {"format": "safetensors", "method": CONVERSION, "revision": "refs/pr/7"}
    with pytest.raises(QueerbiasError, match="no safetensors conversion on the Hub; pass --allow-pickle-weights"):
        locate_weights("org/old", None, False, FakeHub(bin_only, [Discussion(3, CONVERSION_TITLE, "someone")]))
    assert locate_weights("org/old", None, True, FakeHub(bin_only)).method == PICKLE
    # a pinned revision is read as asked: no conversion of another revision stands in for it
    assert locate_weights("org/old", "abc123", True, FakeHub(bin_only, [bot])).method == PICKLE


def test_offline_a_cached_conversion_is_read_as_it_was_online(tmp_path, monkeypatch):
    """A node without network (a Slurm task after `study prefetch`) reads the Hub's safetensors conversion
    the prefetch downloaded (`refs/pr/N` in the cache), not the `.bin` of the main revision."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    repo = tmp_path / "models--org--old"
    for ref, commit, weights in (("main", "a" * 40, "pytorch_model.bin"), ("refs/pr/3", "b" * 40, "model.safetensors"),
                                 ("refs/pr/1", "c" * 40, "pytorch_model.bin")):
        (repo / "refs" / ref).parent.mkdir(parents=True, exist_ok=True)
        (repo / "refs" / ref).write_text(commit)
        (repo / "snapshots" / commit).mkdir(parents=True)
        (repo / "snapshots" / commit / weights).write_bytes(b"weights")
    source = locate_weights("org/old", None, False)
    assert (source.method, source.revision) == (CONVERSION, "refs/pr/3")
    assert locate_weights("org/old", "abc123", True).method == PICKLE  # a pinned revision is read as asked
