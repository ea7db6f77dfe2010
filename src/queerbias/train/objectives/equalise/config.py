"""`equalise`: its config section, every key its trainer reads (the weights of the pair loss, its pair batches);
the declaration is `objective.py`.

    L = lm_term * L_lm + weight * (pair_term * mean_i d_i^2 + group_term * mean_g (mean_{i in g} d_i)^2
                                   + sign_term * mean_g (mean_{i in g} tanh(d_i / temperature))^2
                                   + clp_term * CLP) + anchor_term * KL(P_base || P_model on the corpus batch)

(one_sided: max(0, d_i) for d_i, and CLP over the pairs with d_i > 0 only (clp_one_sided); keep: d_i - keep *
d_base_i for d_i, the base's own preference shrunk rather than zeroed; residual_scale c: that residual divided
by sqrt(|d_base_i| + c); flip_term: + weight * flip_term * mean_i max(0, -sign(d_base_i) * d_i)^2, a crossing
of 0 penalised; `equalise.loss`)

Why more than the per-pair square: within a group, every pair shares the identity
phrase's offset. The per-pair square mostly shrinks pair-level variation, so a smaller
offset of the same sign leaves the group's binary score at 0 or 100. The group term (the
squared mean over the group's pairs in the batch) targets that shared offset directly,
while pair-level variation - which a tie-free binary score needs, see `pair_outcome` -
may remain. The binary score reads the sign of d, i.e. where the group's median sits,
which a skewed group can leave off zero when its mean is zero; the sign term (an option
beyond the issue's formula) balances the group's mean of tanh(d / temperature), a robust
location between mean (large temperature) and median (small). CLP, the counterfactual
pairing term (`equalise.pairing`), is the divergence of the two sentences' next-token
distributions at the shared positions after the identity phrase (with `clp_reference: base`,
sent_less's read from the base model, so only the identity sentence's predictions move). The anchor
(`equalise.anchor`) keeps the corpus text's predictions near the base model's. With
`lm_term: 0` the corpus only anchors. Language modelling alone (`objective: lm`) moved five
groups above 60 on the contrary test frames; beside pairing, leaving it out did not help
(issue 32, docs/training.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from queerbias.options import option


@dataclass
class EqualiseConfig:
    weight: float = option(1.0, "lambda: the weight of the pair loss against the language-modelling loss", ge=0)
    lm_term: float = option(1.0, "weight of the language-modelling loss on the corpus batch (0: the corpus batch "
                                 "only anchors, with anchor_term)", ge=0)
    pair_term: float = option(1.0, "weight of the per-pair square (the issue's formula)", ge=0)
    group_term: float = option(0.0, "weight of the squared per-group mean: the identity phrase's shared offset",
                               ge=0)
    sign_term: float = option(0.0, "weight of the squared per-group mean of tanh(d / temperature): a robust "
                                   "location of d, which the binary score reads", ge=0)
    temperature: float = option(1.0, "scale of d (nats) in the sign term: smaller reads the sign of d more sharply",
                                gt=0)
    clp_term: float = option(0.0, "weight of the counterfactual pairing term: the divergence of the two sentences' "
                                  "next-token distributions at every shared position after the identity phrase "
                                  "(`equalise.pairing`)", ge=0)
    clp_divergence: Literal["js", "symmetric_kl", "kl"] = option(
        "js", "js (Jensen-Shannon), symmetric_kl, or kl (KL of sent_less's from sent_more's context)")
    clp_reference: Literal["pair", "base"] = option(
        "pair", "pair: both sentences' distributions under the model being trained, both receiving gradient; base: "
                "sent_less's read from the base model (the adapter switched off, no gradient), so only the identity "
                "sentence's predictions move, towards what the base predicts after the counterfactual phrase (LoRA "
                "only)")
    clp_positions: int | None = option(None, "compare only the first N such positions of each pair (null: all)",
                                       ge=1)
    clp_top_k: int | None = option(256, "compare the distributions on the k tokens most likely under either plus "
                                        "one outcome for the rest (a lower bound of the full divergence, many "
                                        "times cheaper on a large vocabulary); null: the whole vocabulary", ge=1)
    anchor_term: float = option(0.0, "weight of KL(base || model) of the next-token distributions on the "
                                     "language-modelling batch (`equalise.anchor`; LoRA only: the base is the "
                                     "adapter switched off), outside `weight`", ge=0)
    anchor_top_k: int | None = option(256, "as clp_top_k, for the anchor (null: the whole vocabulary)", ge=1)
    one_sided: bool = option(False, "do no harm: penalise only a preference for the stereotype (every term on "
                                    "max(0, d); pairing only on pairs with d > 0), so a pair that prefers the "
                                    "counterfactual is left alone and one that prefers the stereotype is pulled "
                                    "back as far as indifference")
    clp_one_sided: bool | None = option(None, "the pairing term only on pairs with d > 0 (null: as one_sided; false "
                                              "with one_sided: one-sided score terms, pairing on every pair)")
    keep: float = option(0.0, "the share of the base model's own preference d_base each pair is pulled towards: "
                              "the score terms read d - keep * d_base (0: indifference, the formula above; 0.5: halve "
                              "every pair's preference and never flip its sign; with one_sided, d_base below 0 "
                              "counts 0). LoRA only: d_base is the adapter switched off", ge=0, lt=1)
    flip_term: float = option(0.0, "weight of the squared flips: mean over pairs of max(0, -sign(d_base) * d)^2, "
                                   "how far a pair's preference has crossed 0 from the side the base model put it "
                                   "on. The square loss is ruled by pairs with a large |d|, and the identity-phrase "
                                   "offset that shrinks them carries pairs near 0 across; this term makes those "
                                   "crossings cost. LoRA only: d_base is the adapter switched off", ge=0)
    residual_scale: float | None = option(
        None, "c (nats): each pair's residual in the score terms (d - keep * d_base) is divided by "
              "sqrt(|d_base| + c), so the per-pair square reads (d - keep * d_base)^2 / (|d_base| + c): a pair is "
              "weighed by how far it moved against the size of its own base preference, and pairs the base "
              "found near indifference hold back a shift that every group shares instead of being outweighed by "
              "the largest preferences (null: off). LoRA only: d_base is the adapter switched off", gt=0)
    pairs_per_batch: int = option(32, "training pairs per micro-batch and process (`train.pair_batches.PairBatches`)",
                                  ge=1)
    balance: bool = option(True, "draw every batch evenly over the identity groups (round-robin) rather than at "
                                 "random")
    groups_per_batch: int | None = option(None, "groups in one balanced batch (None = all): fewer groups, more "
                                                "pairs per group", ge=1)
