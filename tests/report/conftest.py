"""Fixtures for the report tests."""

from __future__ import annotations

import pkgutil
import types

import pytest

from queerbias import cli as cli_module

OWN_COMMANDS = {"compare", "report_runs"}


@pytest.fixture
def cli(monkeypatch):
    """`queerbias.cli.main` with only the commands under test discovered.

    Other commands are developed in the same tree and may not import yet; the CLI's
    argument handling and error reporting are still the real ones.
    """
    def own_modules(path):
        return [info for info in pkgutil.iter_modules(path) if info.name in OWN_COMMANDS]

    monkeypatch.setattr(cli_module, "pkgutil", types.SimpleNamespace(iter_modules=own_modules))
    return cli_module.main
