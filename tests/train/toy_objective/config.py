"""The toy objective's config section (`toy:`)."""

from __future__ import annotations

from dataclasses import dataclass

from queerbias.options import option


@dataclass
class ToyConfig:
    repeat: int = option(2, "copies of each corpus document", ge=1)
    smoothing: float = option(0.1, "label smoothing of the language-modelling loss", ge=0, lt=1)
