"""GRUFF fixtures: the tiny template set of tests/tiny_data.py, and the shared templates."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_data import write_templates


@pytest.fixture
def tiny_templates_dir(tmp_path) -> Path:
    return write_templates(tmp_path / "gruff")


@pytest.fixture
def tiny_templates(tiny_templates_dir):
    from queerbias.suites.gruff.templates import load_templates

    return load_templates(tiny_templates_dir)


@pytest.fixture(scope="session")
def shared_templates(shared_data):
    from queerbias.suites.gruff.templates import load_templates

    folder = shared_data / "gruff"
    if not (folder / "task.tsv").is_file():
        pytest.skip(f"GRUFF templates not found in {folder}")
    return load_templates(folder)
