"""The toy objective's declaration."""

from __future__ import annotations

from queerbias.train.objectives.protocol import Objective

from .config import ToyConfig


class ToyObjective(Objective[ToyConfig]):
    name = "toy"
    tag = "toy-objective"
    description = "language modelling on a corpus whose documents are repeated (a test of the objective registry)"
    Config = ToyConfig
    card_sections = ("toy",)
    held_out = False

    def validate(self, config, require) -> None:
        require(config.objective != "toy" or config.method == "lora", "method", "must be lora for objective toy")

    def make_trainer(self, setup):
        from .trainer import make_trainer  # torch and transformers: only when a run starts

        return make_trainer(setup)

    def prepare_corpus(self, config, texts):
        repeat = config.section(ToyConfig).repeat
        return [text for text in texts for _ in range(repeat)], {"toy": {"repeat": repeat}}
