"""`cda`'s declaration (light: read by configs and cards): what the card says, augmentation's checks, its corpus and
its trainer."""

from __future__ import annotations

from queerbias.train.objectives.cda.config import CdaConfig
from queerbias.train.objectives.cda.corpus import augment_corpus
from queerbias.train.objectives.protocol import Objective
from queerbias.train.objectives.registry import list_objectives


class CdaObjective(Objective[CdaConfig]):
    name = "cda"
    tag = "counterfactual-data-augmentation"
    description = ("continued pretraining on the corpus with counterfactual copies of its identity-naming "
                   "documents (CDA; Webster et al. 2020)")
    references = ("- Kellie Webster et al. 2020. Measuring and Reducing Gendered Correlations in Pre-trained "
                  "Models. (CDA)",)
    Config = CdaConfig
    card_sections = ("cda",)

    def make_trainer(self, setup):
        from queerbias.train.objectives.cda.trainer import make_trainer  # torch: when a run starts

        return make_trainer(setup)

    def validate(self, config, require) -> None:
        takers = [objective.name for objective in list_objectives() if objective.augmentable]
        require(not config.section(CdaConfig).augment or config.objective in takers, "cda.augment",
                f"applies to objective {' or '.join(takers)} (objective cda always augments; the others never do)")

    def prepare_corpus(self, config, texts):
        return augment_corpus(config, config.section(CdaConfig), texts)
