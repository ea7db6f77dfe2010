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
