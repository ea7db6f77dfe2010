"""Registered plugins (suites, objectives, model families): a name -> "module:Class", imported when asked for."""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from queerbias.errors import QueerbiasError


def instantiate(what: str, entries: Mapping[str, str], name: str):
    """An instance of the class registered as `name`, which must call itself `name`."""
    if name not in entries:
        raise QueerbiasError(f"unknown {what} {name!r}; registered: {', '.join(entries)}")
    made = load_class(entries[name])()
    if made.name != name:
        raise QueerbiasError(f"{what} registered as {name!r} calls itself {made.name!r}")
    return made


def load_class(target: str) -> type:
    """The class `target` ("module:Class") names."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)
