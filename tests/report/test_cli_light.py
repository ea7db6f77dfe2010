"""The command modules stay light: the CLI imports them all just to build its parser."""

from __future__ import annotations

import subprocess
import sys

from queerbias.report import choices, compare
from queerbias.suites.gifi import config as gifi_config
from queerbias.suites.gifi import dimensions as gifi_dimensions


def test_command_modules_do_not_import_the_numeric_stack():
    """Also the suite commands, which build their flags from every registered suite's settings."""
    modules = ", ".join(f"queerbias.commands.{name}" for name in
                        ("compare", "report", "run", "suites", "score", "gruff", "lou", "gifi"))
    code = (f"import sys, {modules}; import queerbias.suites.registry as r; [r.get_suite(n) for n in r.REGISTRY]; "
            "print(sorted({'numpy', 'scipy', 'pandas', 'matplotlib', 'torch'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_listed_choices_are_the_implemented_ones():
    assert set(choices.SOFT_TESTS) == set(compare.SOFT_TESTS)


def test_gifi_dimensions_listed_light_are_the_implemented_ones():
    """GIFI's dimension names are repeated in its light config, so the CLI needs no numpy to list them."""
    assert gifi_config.DIMENSIONS == gifi_dimensions.DIMENSIONS
