"""The registered suites: name -> where its `Suite` class lives.

Adding a suite is one folder with its `suite.py` and one entry here (docs/new-suite.md).
Another package adds one without touching queerbias through an entry point in the
`queerbias.suites` group (`toy = "my_package.suite:ToySuite"` in its pyproject.toml's
`[project.entry-points."queerbias.suites"]`); a built-in name is never replaced.
Classes are imported when asked for; their modules import only light things at the top.
"""

from __future__ import annotations

import functools
import logging
import sys
from importlib import metadata

from queerbias.plugins import instantiate
from queerbias.suites.protocol import Suite

log = logging.getLogger(__name__)

REGISTRY: dict[str, str] = {
    "pairs": "queerbias.suites.pairs.suite:PairsSuite",
    "gruff": "queerbias.suites.gruff.suite:GruffSuite",
    "lou": "queerbias.suites.lou.suite:LouLMSuite",
    "lou-classifier": "queerbias.suites.lou.suite:LouClassifierSuite",
    "gifi": "queerbias.suites.gifi.suite:GifiSuite",
    "knowledge": "queerbias.suites.knowledge.suite:KnowledgeSuite",
}
ENTRY_POINT_GROUP = "queerbias.suites"
#: the suite of summaries written before runs named their suite (pair runs)
LEGACY_SUITE = "pairs"


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


def get_suite(name: str) -> Suite:
    """The suite registered as `name`."""
    return instantiate("suite", registered(), name)


def list_suites() -> list[Suite]:
    return [get_suite(name) for name in registered()]
