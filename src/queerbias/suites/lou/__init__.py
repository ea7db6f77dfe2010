"""Lou (Waldis et al., EMNLP 2024): German text with six gender-fair reformulations.

Two views: does a language model find gender-fair German as likely as the original
(`run_lou`, the LM view), and do classifiers keep their predictions when people write
inclusively (`runner.run_classifier`)? `run_lou` is imported lazily so that the CLI
can read the task list without loading torch.
"""

from __future__ import annotations


def __getattr__(name: str):
    if name in ("run_lou", "run_classifier"):
        from queerbias.suites.lou import runner

        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["run_classifier", "run_lou"]
