"""Fixtures of the training tests."""

from pathlib import Path

import pytest

from .helpers import DEMO_CORPUS


@pytest.fixture(scope="session")
def demo_corpus() -> Path:
    return DEMO_CORPUS
