"""The toy objective's config section (`toy:`) and declaration."""

from __future__ import annotations

from dataclasses import dataclass

from queerbias.options import option
from queerbias.train.objectives.protocol import Objective


@dataclass
class ToyConfig:
    repeat: int = option(2, "copies of each corpus document", ge=1)
    smoothing: float = option(0.1, "label smoothing of the language-modelling loss", ge=0, lt=1)


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
