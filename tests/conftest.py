"""Shared test fixtures: the public data in ../shared/data (skipped when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder of real public data beside the checkout; tests skip without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"public test data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def tiny_family(tmp_path_factory):
    """`tiny_family(name)`: the folder of a tiny random model of family `name` (`tiny_models.BUILDERS`),
    built once per session."""
    from tiny_models import BUILDERS

    built: dict[str, Path] = {}

    def folder(name: str) -> Path:
        if name not in built:
            built[name] = BUILDERS[name](tmp_path_factory.mktemp(f"tiny-{name}"))
        return built[name]

    return folder


@pytest.fixture(scope="session")
def tiny_bert(tiny_family) -> Path:
    """A tiny random uncased BERT masked LM folder (WordPiece vocabulary learned here)."""
    return tiny_family("bert")


@pytest.fixture(scope="session")
def tiny_gpt2(tiny_family) -> Path:
    """A tiny random GPT-2 folder (byte-level BPE learned here)."""
    return tiny_family("gpt2")


@pytest.fixture(scope="session")
def tiny_llama(tiny_family) -> Path:
    """A tiny random Llama folder (byte-level BPE learned here, BOS <s>)."""
    return tiny_family("llama")


@pytest.fixture(scope="session")
def tiny_gemma(tiny_family) -> Path:
    """A tiny random Gemma 3 folder (SentencePiece-style tokenizer that adds <bos>, soft-capped logits)."""
    return tiny_family("gemma")


@pytest.fixture(scope="session")
def tiny_xlm(tiny_family) -> Path:
    """A tiny random XLM (XLM-CLM/MLM-ENDE's kind: language embeddings de/en, causal: false, slow tokenizer)."""
    return tiny_family("xlm")


@pytest.fixture(scope="session")
def embedded_gemma():
    """The embedded Gemma 3 270M, loaded once per session (about 7 s: a 262k-entry tokenizer and the
    weights) for the tests that only score with it; tests of loading or training load their own."""
    from queerbias.models import load_model

    return load_model("embedded:gemma-3-270m")
