"""The registered suites: name -> where its declaration lives.

Adding a suite is one folder with its `declaration.py` (light: name, settings, flags, judged
figures) and `suite.py` (the implementation, loaded on use) and one entry here
(docs/new-suite.md). Another package adds one without touching queerbias through an entry
point in the `queerbias.suites` group (`toy = "my_package.suite:ToySuite"` in its
pyproject.toml's `[project.entry-points."queerbias.suites"]`); a built-in name is never
replaced. `get_declaration` imports only the declaration; `get_suite` loads the
implementation; `companion` finds a suite's companion hooks (`suites.companions`).
"""

from __future__ import annotations

import functools
import logging
import sys
from importlib import metadata

from queerbias.plugins import instantiate, load_class
from queerbias.suites.companions import DEFAULTS
from queerbias.suites.protocol import Declaration, Suite

log = logging.getLogger(__name__)

REGISTRY: dict[str, str] = {
    "pairs": "queerbias.suites.pairs.declaration:Pairs",
    "gruff": "queerbias.suites.gruff.declaration:Gruff",
    "lou": "queerbias.suites.lou.declaration:Lou",
    "lou-classifier": "queerbias.suites.lou.declaration:LouClassifier",
    "gifi": "queerbias.suites.gifi.declaration:Gifi",
    "knowledge": "queerbias.suites.knowledge.declaration:Knowledge",
}
ENTRY_POINT_GROUP = "queerbias.suites"
#: the suite `queerbias score`, `compare --model`, the Python API's `score` and a training benchmark
#: without a `suite` key evaluate, and that of summaries written before runs named their suite
DEFAULT_SUITE = LEGACY_SUITE = "pairs"


def registered() -> dict[str, str]:
    """Every suite: the built-in ones, then those of installed packages' entry points."""
    found = dict(REGISTRY)
    for name, target in _entry_points(tuple(sys.path)).items():
        if name in found:
            log.warning("suite %r of an installed package is ignored: queerbias has a suite of that name", name)
        else:
            found[name] = target
    return found


@functools.lru_cache(maxsize=4)
def _entry_points(path: tuple[str, ...]) -> dict[str, str]:
    """Entry points by name, scanned once per `sys.path` (a scan reads every installed package)."""
    return {entry.name: entry.value for entry in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def names() -> tuple[str, ...]:
    return tuple(registered())


def get_declaration(name: str) -> Declaration:
    """The declaration of the suite registered as `name` (light: nothing of its implementation loads)."""
    return instantiate("suite", registered(), name)


def get_suite(name: str) -> Suite:
    """The suite registered as `name`, its implementation loaded."""
    declaration = get_declaration(name)
    if isinstance(declaration, Suite):
        return declaration
    if declaration.implementation is None:
        raise TypeError(f"suite {name!r}: {type(declaration).__name__} is a declaration without an implementation")
    made = load_class(declaration.implementation)()
    if not isinstance(made, type(declaration)) or not isinstance(made, Suite):
        raise TypeError(f"suite {name!r}: {declaration.implementation} is not a Suite of its declaration")
    return made


def list_declarations() -> list[Declaration]:
    return [get_declaration(name) for name in registered()]


def list_suites() -> list[Suite]:
    return [get_suite(name) for name in registered()]


def companion(suite: Declaration | str, kind: str):
    """The suite's companion hooks of `kind` ("training", "card", "report"): those its declaration
    names, else the defaults (`suites.companions`)."""
    declaration = get_declaration(suite) if isinstance(suite, str) else suite
    target = declaration.companions.get(kind)
    return (load_class(target) if target else DEFAULTS[kind])()
