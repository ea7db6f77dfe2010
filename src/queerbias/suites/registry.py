"""The registered suites: name -> where its `Suite` class lives.

Adding a suite is one folder with its `suite.py` and one entry here (docs/new-suite.md).
Classes are imported when asked for; their modules import only light things at the top.
"""

from __future__ import annotations

import importlib

from queerbias.errors import QueerbiasError
from queerbias.suites.protocol import Suite

REGISTRY: dict[str, str] = {
    "pairs": "queerbias.suites.pairs.suite:PairsSuite",
    "gruff": "queerbias.suites.gruff.suite:GruffSuite",
    "lou": "queerbias.suites.lou.suite:LouLMSuite",
    "lou-classifier": "queerbias.suites.lou.suite:LouClassifierSuite",
    "gifi": "queerbias.suites.gifi.suite:GifiSuite",
    "knowledge": "queerbias.suites.knowledge.suite:KnowledgeSuite",
}


def get_suite(name: str) -> Suite:
    """The suite registered as `name`."""
    if name not in REGISTRY:
        raise QueerbiasError(f"unknown suite {name!r}; registered: {', '.join(REGISTRY)}")
    module, _, attribute = REGISTRY[name].partition(":")
    suite = getattr(importlib.import_module(module), attribute)()
    if suite.name != name:
        raise QueerbiasError(f"suite registered as {name!r} calls itself {suite.name!r}")
    return suite


def list_suites() -> list[Suite]:
    return [get_suite(name) for name in REGISTRY]
