"""The toy objective's trainer: the common language-modelling `Trainer`, with label smoothing."""

from __future__ import annotations

from queerbias.train.objectives.protocol import TrainerSetup
from queerbias.train.trainer import language_model_trainer

from .config import ToyConfig


def make_trainer(setup: TrainerSetup[ToyConfig]):
    setup.arguments["label_smoothing_factor"] = setup.settings.smoothing
    return language_model_trainer(setup)
