"""`cda`: the trainer of `lm` (transformers' own `Trainer`), on the augmented corpus."""

from __future__ import annotations

from queerbias.train.objectives.lm.trainer import make_trainer

__all__ = ["make_trainer"]
