"""`queerbias suites`: the registered suites, their data, licence and default settings."""

from __future__ import annotations

import argparse
from dataclasses import fields

from queerbias.options import EXECUTION, role, to_dict
from queerbias.suites.registry import list_declarations

HEADER = ("suite", "data (default)", "licence", "settings (defaults)")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "suites", help="list the registered evaluation suites",
        description="List the suites `queerbias run SUITE` evaluates: what they measure, their default data "
                    "and licence, and their default settings.")
    parser.set_defaults(func=handler)


def rows() -> list[tuple[str, ...]]:
    found = []
    for suite in list_declarations():
        defaults = to_dict(suite.Settings())
        shown = {f.name for f in fields(suite.Settings) if role(f) != EXECUTION}
        settings = ", ".join(f"{key}={_value(value)}" for key, value in defaults.items() if key in shown)
        found.append((suite.name, suite.data_default or "cached copy", suite.licence, settings))
    return found


def _value(value) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def handler(args: argparse.Namespace) -> int:
    table = [HEADER, *rows()]
    widths = [max(len(row[i]) for row in table) for i in range(len(HEADER) - 1)]
    for row in table:
        print("  ".join([*(cell.ljust(width) for cell, width in zip(row, widths)), row[-1]]).rstrip())
    print()
    for suite in list_declarations():
        print(f"{suite.name}: {suite.description}")
    return 0
