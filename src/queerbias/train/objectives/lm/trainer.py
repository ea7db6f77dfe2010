"""`lm`: transformers' own `Trainer` on the corpus (the common setup of `train.trainer`)."""

from __future__ import annotations

from queerbias.train.objectives.protocol import TrainerSetup
from queerbias.train.trainer import language_model_trainer


def make_trainer(setup: TrainerSetup):
    return language_model_trainer(setup)
