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
def tiny_bert(tmp_path_factory) -> Path:
    """A tiny random uncased BERT masked LM folder (WordPiece tokenizer trained here)."""
    from tiny_models import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory) -> Path:
    """A tiny random GPT-2 folder (byte-level BPE trained here)."""
    from tiny_models import build_tiny_gpt2

    return build_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"))


@pytest.fixture(scope="session")
def tiny_llama(tmp_path_factory) -> Path:
    """A tiny random Llama folder (byte-level BPE trained here, BOS <s>)."""
    from tiny_models import build_tiny_llama

    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="session")
def tiny_gemma(tmp_path_factory) -> Path:
    """A tiny random Gemma 3 folder (SentencePiece-style tokenizer that adds <bos>, soft-capped logits)."""
    from tiny_models import build_tiny_gemma

    return build_tiny_gemma(tmp_path_factory.mktemp("tiny-gemma"))
