"""The registered objectives: name -> where its `Objective` declaration lives.

Adding an objective is one folder (`objectives/<name>/config.py`, `objective.py` and `trainer.py`) and one
entry here (docs/new-objective.md). Declarations are imported when asked for.
"""

from __future__ import annotations

from queerbias.plugins import instantiate
from queerbias.train.objectives.protocol import Objective

REGISTRY: dict[str, str] = {
    "lm": "queerbias.train.objectives.lm.objective:LmObjective",
    "cda": "queerbias.train.objectives.cda.objective:CdaObjective",
    "equalise": "queerbias.train.objectives.equalise.objective:EqualiseObjective",
    "dpo": "queerbias.train.objectives.dpo.objective:DpoObjective",
    "contrast": "queerbias.train.objectives.contrast.objective:ContrastObjective",
}


def names() -> tuple[str, ...]:
    return tuple(REGISTRY)


def get_objective(name: str) -> Objective:
    """The objective registered as `name`."""
    return instantiate("objective", REGISTRY, name)


def list_objectives() -> list[Objective]:
    return [get_objective(name) for name in REGISTRY]
