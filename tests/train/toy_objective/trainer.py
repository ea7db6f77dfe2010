"""The toy objective's trainer: the common language-modelling `Trainer`, with label smoothing."""

from __future__ import annotations

from queerbias.train.objectives.protocol import TrainerSetup
from queerbias.train.trainer import language_model_trainer


def make_trainer(setup: TrainerSetup):
    setup.arguments["label_smoothing_factor"] = setup.config.toy.smoothing
    return language_model_trainer(setup)
