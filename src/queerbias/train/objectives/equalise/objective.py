"""`equalise`'s declaration (light: read by configs and cards): what the card says, its checks across keys, the CDA
corpus it may train on and its trainer."""

from __future__ import annotations

from queerbias.train.objectives.cda.config import CdaConfig
from queerbias.train.objectives.cda.corpus import augment_corpus
from queerbias.train.objectives.cda.objective import CdaObjective
from queerbias.train.objectives.equalise.config import EqualiseConfig
from queerbias.train.objectives.protocol import Objective


class EqualiseObjective(Objective[EqualiseConfig]):
    name = "equalise"
    tag = "equalising-loss"
    description = ("language modelling plus a loss that makes the benchmark's own score indifferent to the "
                   "identity phrase on counterfactual training pairs")
    Config = EqualiseConfig
    card_sections = ("pairs", "equalise", "cda")
    uses_pairs = True
    mined_pairs = True
    augmentable = True

    def validate(self, config, require) -> None:
        e = config.section(EqualiseConfig)
        require(e.pair_term + e.group_term + e.sign_term + e.clp_term > 0, "equalise.pair_term",
                "group_term, sign_term and clp_term cannot all be 0")
        require(e.lm_term > 0 or e.anchor_term > 0, "equalise.lm_term",
                "0 needs anchor_term above 0: without either, nothing holds the corpus text's predictions")
        require(not e.anchor_term or config.method == "lora", "equalise.anchor_term",
                "needs method: lora (the anchor's base model is the adapter switched off)")
        for name, used in (("keep", e.keep), ("flip_term", e.flip_term), ("residual_scale", e.residual_scale),
                           ("clp_reference", e.clp_reference == "base")):
            require(not used or config.method == "lora", f"equalise.{name}",
                    "needs method: lora (the base's preference is read with the adapter switched off)")

    def make_trainer(self, setup):
        from queerbias.train.objectives.equalise.trainer import make_trainer  # torch: when a run starts

        return make_trainer(setup)

    def card_references(self, config):
        """CDA's too, when `cda.augment` added counterfactual copies to the corpus."""
        return CdaObjective.references if (config.get("cda") or {}).get("augment") else ()

    def prepare_corpus(self, config, texts):
        cda = config.section(CdaConfig)
        return augment_corpus(config, cda, texts) if cda.augment else (texts, {})
