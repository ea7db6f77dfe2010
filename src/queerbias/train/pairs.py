"""Training pairs of the pair objectives (equalise, dpo): the `pairs` section, loading, batches.

`pairs.train` names them (a split side, e.g. `queerbias-de:train`, a registered set or a
file); the overlap guard (`train.overlap`) keeps them apart from the evaluation items, and
`PairBatches` draws seeded, group-balanced batches from them.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass

from queerbias.errors import QueerbiasError
from queerbias.options import option
from queerbias.pairs.resolve import load_pairs
from queerbias.pairs.schema import Pair, PairSet


@dataclass
class TrainingPairs:
    """The counterfactual pairs the pair objectives train on, and the held-out guard (config key `pairs`)."""

    train: str | None = option(None, "a split side (`queerbias-de:train`), a registered pair set or a pair file")
    batch_size: int = option(32, "pairs per micro-batch (equalise)", ge=1)
    balance: bool = option(True, "draw every batch evenly over the identity groups (round-robin) rather than at "
                                 "random")
    groups_per_batch: int | None = option(None, "groups in one balanced batch (None = all): fewer groups, more "
                                                "pairs per group", ge=1)
    allow_overlap: bool = option(False, "let evaluation items share sentences with the training pairs; recorded "
                                        "in every summary")


def load_training_pairs(config) -> PairSet:
    """The configured training pairs."""
    try:
        pairs = load_pairs(config.pairs.train)
    except QueerbiasError as err:
        raise QueerbiasError(f"config key 'pairs.train': {err}") from err
    if not pairs.pairs:
        raise QueerbiasError(f"config key 'pairs.train': {config.pairs.train} holds no pairs")
    return pairs


class PairBatches:
    """Seeded pair batches: the batch for (step, micro-batch, process) is always the same,
    so a resumed run draws what an uninterrupted one would.

    Balanced batches take turns over the groups, so a group's mean in the group terms
    rests on as many pairs as the batch allows. With `groups_per_batch` = k, each batch
    holds k groups (batch_size / k pairs each): a group's mean then rests on several
    pairs at the cost of one pair per group. The groups take turns in a shuffled cycle,
    so every group is drawn equally often.
    """

    def __init__(self, pairs: Sequence[Pair], batch_size: int, balance: bool, seed: int,
                 groups_per_batch: int | None = None, accumulation: int = 1, processes: int = 1):
        self.pairs, self.batch_size, self.balance, self.seed = list(pairs), batch_size, balance, seed
        self.accumulation, self.processes = accumulation, processes
        self.by_group: dict[str, list[Pair]] = {}
        for pair in self.pairs:
            self.by_group.setdefault(pair.group, []).append(pair)
        self.groups_per_batch = min(groups_per_batch or len(self.by_group), len(self.by_group))

    def _rng(self, *parts) -> random.Random:
        key = "/".join(map(str, (self.seed, *parts))).encode()
        return random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))

    def draw(self, step: int, micro: int, process: int) -> list[Pair]:
        rng = self._rng(step, micro, process)
        if not self.balance:
            return rng.sample(self.pairs, min(self.batch_size, len(self.pairs)))
        groups = self._groups(step, micro, process)
        pools = {g: rng.sample(self.by_group[g], len(self.by_group[g])) for g in groups}
        batch: list[Pair] = []
        while len(batch) < self.batch_size and any(pools.values()):
            for group in groups:
                if pools[group] and len(batch) < self.batch_size:
                    batch.append(pools[group].pop())
        return batch

    def _groups(self, step: int, micro: int, process: int) -> list[str]:
        """The groups of one batch: a window of a per-cycle shuffle of all groups."""
        k, n = self.groups_per_batch, len(self.by_group)
        draws_per_cycle = -(-n // k)
        index = (step * self.accumulation + micro) * self.processes + process  # draws so far
        cycle_number, position = divmod(index, draws_per_cycle)
        order = sorted(self.by_group)
        self._rng("cycle", cycle_number).shuffle(order)
        window = order[position * k:(position + 1) * k]
        return window + order[:k - len(window)]  # the last window of a cycle wraps around
