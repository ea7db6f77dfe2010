"""`contrast`: its config section, every key the trainer reads (the batch's included); the declaration is
`objective.py`.

    L = lm_term * L_lm + corpus_anchor_term * KL(P_base || P_model on the corpus batch)
        + weight * (cell_term * mean_cells c+^2 + group_term * mean_g (mean_{cells of g} c+)^2)
        + anchor_term * mean over positions KL(P_base || P_model)

c is a (group, frame, phrases) cell's association: the mean d = s(sent_more) - s(sent_less) of its
stereotype pairs minus that of its neutral pairs (`reference: neutral`), the benchmark's own score
differentiated (`suites.pairs.scoring`), over the tokens after the identity phrase (`tokens: predicate`);
c+ = max(0, c) (`one_sided`). What a stereotype and a neutral predicate of the same frame share cancels
in c, and the identity phrase's own tokens are not read at all, so a shift of the name earns nothing
(issue 53). The neutral pairs' d enters c without a gradient (`move_reference: false`): lowering c by
making the neutral predicates likelier after the group's name earns nothing either. `reference: none` (an ablation) reads the stereotype pairs alone, no neutral predicate.
The identity-invariance anchor (`contrast.anchor`) is the KL to the base model at every position
from the identity words on, in the batch's neutral pairs (both sentences) and in pairs mined from the
corpus: the model cannot lower c by moving the neutral reference or the group's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from queerbias.options import option


@dataclass
class ContrastConfig:
    weight: float = option(1.0, "lambda: the weight of the contrast terms", ge=0)
    reference: Literal["neutral", "none"] = option(
        "neutral", "neutral: c = the stereotype pairs' d minus the neutral pairs' d of the same cell; none "
                   "(ablation): c = the stereotype pairs' d alone")
    tokens: Literal["predicate", "all"] = option(
        "predicate", "the tokens d sums in the loss: predicate, those after the identity phrase (where a frame puts "
                     "the verb before the group, the phrase's own tokens depend on the predicate and would carry a "
                     "shift of the name into c); all, every shared token as the benchmark scores")
    move_reference: bool = option(False, "let c's gradient reach the neutral pairs (false: they are a fixed "
                                         "reference, so c can only fall on the stereotype's side; the anchor holds "
                                         "them where the base had them)")
    one_sided: bool = option(True, "penalise only c > 0 (towards the stereotype): a cell at or below indifference "
                                   "adds nothing")
    cell_term: float = option(1.0, "weight of the mean squared c over the batch's cells", ge=0)
    group_term: float = option(1.0, "weight of the mean over groups of the squared mean c of the group's cells", ge=0)
    anchor_term: float = option(1.0, "weight of the identity-invariance anchor: KL(base || model) per position from "
                                     "the identity words on, in the neutral pairs and the mined corpus pairs, both "
                                     "sentences (LoRA only: the base is the adapter switched off)", ge=0)
    anchor_top_k: int | None = option(256, "compare the anchor's distributions on the k tokens most likely under "
                                           "either plus one outcome for the rest (null: the whole vocabulary)", ge=1)
    lm_term: float = option(0.0, "weight of language modelling on the corpus batch", ge=0)
    corpus_anchor_term: float = option(1.0, "weight of KL(base || model) on the corpus batch, every position (LoRA "
                                            "only): general language held where no identity is named", ge=0)
    cells: int = option(6, "groups per micro-batch and process, the groups in turn", ge=1)
    cells_per_group: int = option(1, "cells (frames) of each of those groups: with several, the group term reads "
                                     "the group's mean c over frames, so one-sided it pushes only a group whose "
                                     "frames lean towards the stereotype on average", ge=1)
    stereotypes_per_cell: int = option(2, "stereotype pairs of a cell in one batch", ge=1)
    neutral_per_cell: int = option(2, "neutral pairs of a cell in one batch", ge=1)
    mined_per_batch: int = option(4, "pairs mined from the corpus (pairs.mine) in the anchor of one batch", ge=0)
