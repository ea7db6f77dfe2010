"""The scorer of a model's family (after minicons: one scorer per family behind one interface)."""

from __future__ import annotations

from queerbias.models.loading import LoadedModel
from queerbias.scoring.causal import CausalScorer
from queerbias.scoring.config import ScoringConfig
from queerbias.scoring.masked import MaskedScorer
from queerbias.scoring.scorer import Scorer


def make_scorer(lm: LoadedModel, config: ScoringConfig | None = None, batch_size: int | str = "auto") -> Scorer:
    """The scorer for the model's family: masked LMs by pseudo-log-likelihood, causal LMs by one pass."""
    return (MaskedScorer if lm.kind == "masked" else CausalScorer)(lm, config, batch_size)
