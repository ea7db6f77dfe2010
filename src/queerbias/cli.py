"""queerbias: measure and mitigate anti-LGBTQ+ bias in German and multilingual language models.

The console command. Each subcommand lives in its own module under `queerbias.commands` and exposes
`register(subparsers)`; the modules are discovered, so adding a command never
touches this file. Every refusal, from argparse or from our code, is one line on
stderr with exit status 2 (docs/refusals.md).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys

from queerbias import __version__, commands
from queerbias.errors import QueerbiasError


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (the full usage is one `--help` away).

    Subparsers inherit the class, so this holds for every subcommand.
    """

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="queerbias", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"queerbias {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        return int(args.func(args) or 0)
    except QueerbiasError as err:
        print(f"queerbias {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
