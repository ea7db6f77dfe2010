"""The pair benchmark in a training run: its historical folder name, its held-out default data and how it
guards a run (the validation shapes of queerbias-de-shapes)."""

from __future__ import annotations

from queerbias.pairs.registry import available_offline
from queerbias.suites.companions import TrainingHooks
from queerbias.suites.pairs.harm import guard_refusal


class PairTraining(TrainingHooks):
    #: every earlier run named its first pair benchmark's folder so
    folder_name = "bias"
    #: what mitigation runs are judged on when a pair benchmark names no data
    held_out_default: str | None = "queerbias-de:test"

    def data(self, suite, spec, held_out):
        return self.held_out_default if spec is None and held_out else spec

    def available_offline(self, suite, spec):
        """A published pair set is available when cached or in the shared data folder."""
        return available_offline(spec or suite.data_default)

    def default_benchmarks(self, held_out):
        """A mitigation (judged on held-out data): 200 held-out pairs (queerbias-de:test) and, out of
        distribution, 400 pairs each of English WinoQueer v0 and WinoQueer-DE where they are on this
        machine (cached or in the shared data folder); else (continued pretraining) 200 pairs of
        queerbias-de."""
        if not held_out:
            return [{}]
        return [{"data": self.held_out_default, "name": self.folder_name},
                {"data": "winoqueer-v0", "sample": 400, "name": f"{self.folder_name}-ood-en", "optional": True,
                 "options": {"identical": "drop"}},  # v0 has two identical pairs
                {"data": "winoqueer-de", "sample": 400, "name": f"{self.folder_name}-ood-winoqueer-de",
                 "optional": True}]

    def guard_refusal(self, suite, comparison, allowed):
        """A pair benchmark guarding a run (the validation shapes of queerbias-de-shapes): its excess rose
        more than `allowed` points, or a group shifted towards the stereotype (`harm.guard_refusal`)."""
        return guard_refusal(comparison, allowed)
