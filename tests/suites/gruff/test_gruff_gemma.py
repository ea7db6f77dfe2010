"""The embedded Gemma resolves er/sie by grammatical agreement far above chance (a real signal)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from queerbias.scoring.scorer import make_scorer
from queerbias.suites.gruff.generation import instance, strata
from queerbias.suites.gruff.scoring import answers, score_options, scoring_config

N_ITEMS = 16  # one forward pass of a 270M model per option on CPU: keep the test under a minute


@pytest.mark.slow
def test_gemma_no_context_agreement_for_er_and_sie(shared_templates, embedded_gemma):
    binary = [s for s in strata(shared_templates, "none") if s.system in ("masculine", "feminine")]
    chosen = random.Random(0).sample(binary, N_ITEMS)
    items = [instance(s, 0, "none") for s in chosen]
    assert {i.target for i in items} == {"er", "sie"}
    lm = embedded_gemma
    config = scoring_config(lm)
    assert config.bos == "prepend"  # Gemma's tokenizer adds <bos>, as in the paper's script
    scores = score_options(make_scorer(lm, config), items, progress=False)
    gold = np.array([i.gold for i in items])
    picked, _ = answers(scores)
    four_way = (picked == gold).mean()
    er_or_sie = (scores[:, :2].argmax(axis=1) == gold).mean()
    assert four_way >= 0.6, four_way  # chance: 0.25
    assert er_or_sie >= 0.75, er_or_sie  # chance: 0.5
