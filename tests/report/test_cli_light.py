"""The command modules stay light: the CLI imports them all just to build its parser."""

from __future__ import annotations

import subprocess
import sys

from queerbias.report import checkpoints, choices, compare


def test_command_modules_do_not_import_the_numeric_stack():
    code = ("import sys, queerbias.commands.compare, queerbias.commands.report; "
            "print(sorted({'numpy', 'scipy', 'pandas', 'matplotlib'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_listed_choices_are_the_implemented_ones():
    assert set(choices.SOFT_TESTS) == set(compare.SOFT_TESTS)
    assert set(choices.BEST_CRITERIA) == set(checkpoints.CRITERIA)
