"""The knowledge set in a training run: a pair set (available offline as pair sets are), never trained on,
so its default data is the test itself, and its folder is named after its data; as a guard, its declared
guard figure (accuracy) may fall at most the allowance."""

from __future__ import annotations

from queerbias.suites.companions import TrainingHooks
from queerbias.suites.pairs.training import PairTraining


class KnowledgeTraining(PairTraining):
    folder_name = None
    held_out_default = None
    guard_refusal = TrainingHooks.guard_refusal
