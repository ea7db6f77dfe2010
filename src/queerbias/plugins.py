"""Registered plugins (suites, objectives): a name -> "module:Class", imported when asked for."""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from queerbias.errors import QueerbiasError


def instantiate(what: str, entries: Mapping[str, str], name: str):
    """An instance of the class registered as `name`, which must call itself `name`."""
    if name not in entries:
        raise QueerbiasError(f"unknown {what} {name!r}; registered: {', '.join(entries)}")
    module, _, attribute = entries[name].partition(":")
    made = getattr(importlib.import_module(module), attribute)()
    if made.name != name:
        raise QueerbiasError(f"{what} registered as {name!r} calls itself {made.name!r}")
    return made
