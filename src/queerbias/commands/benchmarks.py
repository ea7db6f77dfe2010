"""`queerbias benchmarks`: which pair sets can be named with --pairs, and which are local."""

from __future__ import annotations

import argparse

from queerbias.pairs.registry import build_builtin, list_benchmarks

HEADER = ("name", "language", "pairs", "cached", "licence")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "benchmarks",
        help="list the registered pair benchmarks",
        description="List the registered pair benchmarks: size, whether a local copy exists, licence.",
    )
    parser.set_defaults(func=handler)


def _row(info) -> tuple[str, ...]:
    if info.builtin:
        pairs, cached = len(build_builtin(info)), "builtin"
    else:
        pairs, cached = info.pairs, "yes" if info.is_cached() else "no"
    return info.name, info.language, f"{pairs:,}" if pairs else "?", cached, info.licence


def handler(args: argparse.Namespace) -> int:
    rows = [HEADER, *(_row(info) for info in list_benchmarks())]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return 0
