"""`dpo`: its config section (TRL's DPO settings); the declaration is `objective.py`."""

from __future__ import annotations

from dataclasses import dataclass

from queerbias.options import option

#: TRL's DPO loss types (trl/trainer/dpo_trainer.py, `DPOTrainer.dpo_loss`, TRL 1.16), checked when the config
#: is read: TRL finds an unknown one only once the model has loaded. `exo_pair` is left out: TRL refuses it
#: without label smoothing, which this section does not set.
LOSS_TYPES = ("sigmoid", "hinge", "ipo", "nca_pair", "robust", "bco_pair", "sppo_hard", "aot", "aot_unpaired",
              "apo_zero", "apo_down", "discopop", "sft", "sigmoid_norm")


@dataclass
class DpoConfig:
    beta: float = option(0.1, "deviation from the reference model (TRL's beta)", gt=0)
    loss_type: str = option("sigmoid", "TRL loss type", choices=LOSS_TYPES)
    max_length: int = option(64, "longest prompt + continuation in tokens", ge=8)
