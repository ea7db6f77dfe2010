"""`contrast`'s declaration (light: read by configs and cards): what the card says, its checks across keys and its
trainer."""

from __future__ import annotations

from queerbias.train.objectives.contrast.config import ContrastConfig
from queerbias.train.objectives.protocol import Objective


class ContrastObjective(Objective[ContrastConfig]):
    name = "contrast"
    tag = "association-contrast"
    description = ("a one-sided loss on the association of each group with its stereotypes relative to neutral "
                   "predicates of the same frame, with the base model's predictions held after the identity words")
    references = ("- Keita Kurita, Nidhi Vyas, Ayush Pareek, Alan W Black and Yulia Tsvetkov. 2019. Measuring "
                  "Bias in Contextualized Word Representations (a target's probability against its prior).",)
    Config = ContrastConfig
    card_sections = ("pairs", "contrast")
    uses_pairs = True
    mined_pairs = True

    def make_trainer(self, setup):
        from queerbias.train.objectives.contrast.trainer import make_trainer  # torch: when a run starts

        return make_trainer(setup)

    def validate(self, config, require) -> None:
        """Checks across keys, when contrast is the run's objective (its anchors' defaults need LoRA)."""
        if config.objective != self.name:
            return
        c = config.section(ContrastConfig)
        require(c.cell_term + c.group_term > 0, "contrast.cell_term", "cell_term and group_term cannot both be 0")
        require(c.lm_term > 0 or c.corpus_anchor_term > 0, "contrast.lm_term",
                "0 needs corpus_anchor_term above 0: without either the corpus batch holds nothing")
        for name, used in (("anchor_term", c.anchor_term), ("corpus_anchor_term", c.corpus_anchor_term)):
            require(not used or config.method == "lora", f"contrast.{name}",
                    "needs method: lora (the anchor's base model is the adapter switched off)")
