"""`dpo`: its config section (TRL's DPO settings) and declaration (light)."""

from __future__ import annotations

from dataclasses import dataclass

from queerbias.families import CAUSAL
from queerbias.options import option
from queerbias.train.objectives.protocol import Objective

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


class DpoObjective(Objective[DpoConfig]):
    name = "dpo"
    tag = "dpo"
    description = ("preference tuning (DPO, TRL's DPOTrainer) on stereotype frames: a refutation preferred to "
                   "the stereotype (after BiasDPO, Allam 2024)")
    references = ("- Ahmed Allam. 2024. BiasDPO: Mitigating Bias in Language Models through Direct Preference "
                  "Optimization.",)
    Config = DpoConfig
    card_sections = ("pairs", "dpo")
    uses_pairs = True
    uses_corpus = False
    needs_kind = CAUSAL
    needs_kind_reason = "preference tuning scores continuations"

    def make_trainer(self, setup):
        from queerbias.train.objectives.dpo.trainer import make_trainer  # torch: when a run starts

        return make_trainer(setup)
