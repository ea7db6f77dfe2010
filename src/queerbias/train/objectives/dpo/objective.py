"""`dpo`'s declaration (light: read by configs and cards): what the card says, the model family it needs and its
trainer."""

from __future__ import annotations

from queerbias.families import CAUSAL
from queerbias.train.objectives.dpo.config import DpoConfig
from queerbias.train.objectives.protocol import Objective


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
