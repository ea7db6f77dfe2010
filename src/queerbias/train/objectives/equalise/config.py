"""`equalise`: its config section (the weights of the pair loss) and declaration (light).

    L = L_lm + weight * (pair_term * mean_i d_i^2 + group_term * mean_g (mean_{i in g} d_i)^2
                         + sign_term * mean_g (mean_{i in g} tanh(d_i / temperature))^2)

Why more than the per-pair square: within a group, every pair shares the identity
phrase's offset. The per-pair square mostly shrinks pair-level variation, so a smaller
offset of the same sign leaves the group's binary score at 0 or 100. The group term (the
squared mean over the group's pairs in the batch) targets that shared offset directly,
while pair-level variation - which a tie-free binary score needs, see `pair_outcome` -
may remain. The binary score reads the sign of d, i.e. where the group's median sits,
which a skewed group can leave off zero when its mean is zero; the sign term (an option
beyond the issue's formula) balances the group's mean of tanh(d / temperature), a robust
location between mean (large temperature) and median (small).
"""

from __future__ import annotations

from dataclasses import dataclass

from queerbias.options import option
from queerbias.train.objectives.cda.config import CdaObjective
from queerbias.train.objectives.cda.corpus import augment_corpus
from queerbias.train.objectives.protocol import Objective


@dataclass
class EqualiseConfig:
    weight: float = option(1.0, "lambda: the weight of the pair loss against the language-modelling loss", ge=0)
    pair_term: float = option(1.0, "weight of the per-pair square (the issue's formula)", ge=0)
    group_term: float = option(0.0, "weight of the squared per-group mean: the identity phrase's shared offset",
                               ge=0)
    sign_term: float = option(0.0, "weight of the squared per-group mean of tanh(d / temperature): a robust "
                                   "location of d, which the binary score reads", ge=0)
    temperature: float = option(1.0, "scale of d (nats) in the sign term: smaller reads the sign of d more sharply",
                                gt=0)


class EqualiseObjective(Objective):
    name = "equalise"
    tag = "equalising-loss"
    description = ("language modelling plus a loss that makes the benchmark's own score indifferent to the "
                   "identity phrase on counterfactual training pairs")
    Config = EqualiseConfig
    card_sections = ("pairs", "equalise", "cda")
    uses_pairs = True
    augmentable = True

    def validate(self, config, require) -> None:
        terms = config.equalise.pair_term + config.equalise.group_term + config.equalise.sign_term
        require(terms > 0, "equalise.pair_term", "group_term and sign_term cannot all be 0")

    def card_references(self, config):
        """CDA's too, when `cda.augment` added counterfactual copies to the corpus."""
        return CdaObjective.references if (config.get("cda") or {}).get("augment") else ()

    def prepare_corpus(self, config, texts):
        return augment_corpus(config, texts) if config.cda.augment else (texts, {})
