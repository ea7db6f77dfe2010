"""What the CLI and configs read stays light: the suites' declarations, never their implementations."""

from __future__ import annotations

import subprocess
import sys

from queerbias.comparison.compare import soft_test
from queerbias.report.options import SOFT_TESTS

HEAVY = {"numpy", "scipy", "pandas", "matplotlib", "torch", "transformers"}


def _loaded_after(code: str, watched: set[str]) -> list[str]:
    probe = f"import sys\n{code}\nprint(sorted(set({sorted(watched)!r}) & set(sys.modules)))"
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return eval(found)  # a printed list of names


def test_import_queerbias_and_help_load_no_numeric_stack():
    """`import queerbias` loads none of it; `queerbias --help` (every command module, the suites' own
    commands among them) and every registered suite's declaration and training companion load no
    torch, transformers, pandas, scipy or matplotlib (numpy: the corpus command's MinHash options)."""
    assert _loaded_after("import queerbias", HEAVY) == []
    help_and_declarations = (
        "import contextlib, io\nfrom queerbias.cli import main\nimport queerbias.suites.registry as r\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n    main(['--help'])\n"
        "[(r.get_declaration(n), r.companion(n, 'training')) for n in r.REGISTRY]")
    assert _loaded_after(help_and_declarations, HEAVY - {"numpy"}) == []


def test_every_listed_soft_test_is_implemented():
    """The light declaration names each test's function in `paired_stats` (one list, no twin)."""
    for name in SOFT_TESTS:
        assert callable(soft_test(name))
