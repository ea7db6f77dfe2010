"""`lm`: continued pretraining; no settings of its own, so only its declaration (light: read by configs and cards)."""

from __future__ import annotations

from queerbias.train.objectives.protocol import Objective


class LmObjective(Objective[None]):
    name = "lm"
    tag = "continued-pretraining"
    description = ("continued pretraining on the corpus (the seed study's method; Morch & Braun 2026, "
                   "section 3.4)")
    held_out = False  # trains on no evaluation material, so it is judged on the whole pair set

    def make_trainer(self, setup):
        from queerbias.train.objectives.lm.trainer import make_trainer  # torch: when a run starts

        return make_trainer(setup)
