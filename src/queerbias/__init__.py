"""queerbias: measure and mitigate anti-LGBTQ+ bias in German and multilingual LMs.

The Python API (docs/api.md): `score` a model on sentence pairs, `run_suite` any registered
suite (`list_suites`), `load_run` a run folder, `compare` runs before and after a
mitigation, run a `study` (models × training runs × seeds). The names load on first use, so
`import queerbias` and the CLI stay light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from queerbias.errors import QueerbiasError

__version__ = "0.1.0"

__all__ = ["Comparison", "QueerbiasError", "RunRecord", "ScoreRun", "__version__", "compare", "list_suites",
           "load_run", "run_suite", "score", "study"]
_API = frozenset(__all__) - {"QueerbiasError", "__version__"}  # defined in queerbias.api

if TYPE_CHECKING:
    from queerbias.api import (
        Comparison,
        RunRecord,
        ScoreRun,
        compare,
        list_suites,
        load_run,
        run_suite,
        score,
        study,
    )


def __getattr__(name: str):
    if name in _API:
        from queerbias import api  # pandas, matplotlib: `import queerbias` loads no numeric stack

        return getattr(api, name)
    raise AttributeError(f"module 'queerbias' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
