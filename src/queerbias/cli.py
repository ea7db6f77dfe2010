"""queerbias: measure and mitigate anti-LGBTQ+ bias in German and multilingual language models.

The console command, on top of everything it drives. Each subcommand lives in its own module under
`queerbias.commands` (the built-in suites' aliases and exports among them) and exposes
`register(subparsers)`; the modules are discovered, so adding a command never touches this file.
A suite of another package adds commands of its own through its declaration (`Declaration.commands`,
found through the suite registry). No other module of queerbias imports `queerbias.commands`
(`tests/test_layers.py`). Every refusal, from argparse or from our code, is one line on stderr with
exit status 2 (docs/refusals.md).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import pkgutil
import sys

from queerbias import __version__, commands, os_errors
from queerbias.errors import QueerbiasError
from queerbias.suites.registry import list_declarations


class _UsageError(Exception):
    """A command line argparse refuses, as its one-line message."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (the full usage is one `--help` away), reported
    like every other refusal.

    Subparsers inherit the class, so this holds for every subcommand.
    """

    def error(self, message: str):
        raise _UsageError(f"{self.prog}: error: {message} (see {self.prog} --help)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="queerbias", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"queerbias {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    found = [f"{commands.__name__}.{info.name}" for info in sorted(pkgutil.iter_modules(commands.__path__),
                                                                    key=lambda m: m.name)]
    found += [module for suite in list_declarations() for module in suite.commands]  # other packages' suites
    for name in dict.fromkeys(found):
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None, report=None) -> int:
    """Run one command; a refusal is one line for `report` (default: stderr) and status 2."""
    report = report or _to_stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except _UsageError as err:
        report(str(err))
        return 2
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        problem = os_errors.working_folder_problem() or os_errors.stdout_problem()
        if problem:
            raise QueerbiasError(problem)
        return int(args.func(args) or 0)
    except QueerbiasError as err:
        report(f"queerbias {args.command}: error: {one_line(str(err))}")
        return err.status
    except (OSError, UnicodeEncodeError) as err:  # the machine's, not the input's: full disk, closed pipe, ...
        if isinstance(err, BrokenPipeError):
            os_errors.silence_stdout()
        report(f"queerbias {args.command}: error: {os_errors.describe(err)}")
        return 2
    except Exception as err:  # a library's report of the machine's failure (a full disk while saving a model)
        failure = os_errors.as_os_error(err)
        if failure is None:
            raise
        report(f"queerbias {args.command}: error: {os_errors.describe(failure)}")
        return 2


#: the longest refusal shown: one that quotes a long value (a 200 KB config line) keeps its ends
MAX_LINE = 1000


def one_line(message: str) -> str:
    """A refusal as one line, where it quotes a library's message of several (transformers' offline
    advice, a YAML parser's context), cut in the middle where it is longer than `MAX_LINE` (it
    quotes a value whole): its start names the file or option, its end says why."""
    line = " ".join(part.strip() for part in message.splitlines() if part.strip())
    if len(line) <= MAX_LINE:
        return line
    head, tail = MAX_LINE * 2 // 3, MAX_LINE // 3
    return f"{line[:head]} [... {len(line) - head - tail:,} characters ...] {line[-tail:]}"


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr)


def exit_after(status: int) -> None:
    """End the process with `status`; after a refusal at once, with the streams and logs flushed but
    without the interpreter's teardown: once torch and peft are loaded it takes seconds (10 s on a
    busy core, measured; C-level destructors), and nothing is left to clean up after a refusal."""
    if status == 2:
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
        os._exit(status)
    sys.exit(status)


def run() -> None:
    """The `queerbias` console command."""
    exit_after(main())


if __name__ == "__main__":
    run()
