"""`lm`: continued pretraining; no settings of its own (light: read by configs and cards)."""

from __future__ import annotations

from queerbias.train.objectives.protocol import Objective


class LmObjective(Objective):
    name = "lm"
    tag = "continued-pretraining"
    description = ("continued pretraining on the corpus (the seed study's method; Morch & Braun 2026, "
                   "section 3.4)")
    held_out = False  # trains on no evaluation material, so it is judged on the whole pair set
