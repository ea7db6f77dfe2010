"""Training pairs of the pair objectives (equalise, contrast, dpo): loading, and equalise's seeded batches (the
config section `pairs` is `train.config.TrainingPairs`; how many pairs a batch holds is equalise's own section).

`pairs.train` names them (a split side, e.g. `queerbias-de:train`, a registered set or a
file, or a list), `pairs.train_optional` adds sets where they are on this machine and
`pairs.mine` adds pairs mined from real text (`pairs.mining`); the overlap guard (`train.overlap`) keeps them apart from the evaluation items, and
`PairBatches` draws seeded, group-balanced batches from them.
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections.abc import Sequence

from queerbias.errors import QueerbiasError
from queerbias.pairs.mining import load_lexicons, mine_pairs, mined_pair_set
from queerbias.pairs.registry import available_offline
from queerbias.pairs.resolve import load_pairs
from queerbias.pairs.schema import Pair, PairSet
from queerbias.train.config import training_sources
from queerbias.train.corpus import targeted
from queerbias.train.data import read_texts

log = logging.getLogger(__name__)


def load_training_pairs(config, corpus: list[str] | None = None) -> PairSet | None:
    """The configured training pairs (None for objectives without pairs): `pairs.train`, plus
    the pairs mined (`pairs.mining`) from the sources `pairs.mine` names ("corpus": the
    training corpus's texts `corpus`, or a JSONL file / corpus folder)."""
    if not config.pairs.train and not config.pairs.mine:
        return None
    parts = []
    optional = []
    for index, spec in enumerate(config.pairs.train_optional or []):
        if available_offline(spec):
            optional.append((f"pairs.train_optional[{index}]", spec))
        else:
            log.warning("training pairs %s are not available offline; trained without them", spec)
    for key, spec in training_sources(config.pairs.train) + optional:
        try:
            parts.append(load_pairs(spec, identical="drop"))
        except QueerbiasError as err:
            raise QueerbiasError(f"config key '{key}': {err}") from err
        if not parts[-1].pairs:
            raise QueerbiasError(f"config key '{key}': {spec} holds no pairs")
    if config.pairs.mine:
        parts.append(_mined(config, corpus or []))
    if len(parts) == 1:
        return parts[0]
    combined = [p for part in parts for p in part.pairs]
    return PairSet(" + ".join(part.name for part in parts), combined, "combined",
                   meta={"parts": [{"name": part.name, "checksum": part.checksum, "n": len(part)} for part in parts],
                         **parts[-1].meta})


def _mined(config, corpus: list[str]) -> PairSet:
    """Pairs mined from the configured sources; a group that `data.identities` targets but
    no mined pair names is refused (the targeted mitigation would silently not target it)."""
    texts = []
    for index, source in enumerate(config.pairs.mine):
        if source == "corpus":
            texts += corpus
        else:
            try:
                texts += read_texts(source, config.data, "train", None)
            except QueerbiasError as err:
                raise QueerbiasError(f"config key 'pairs.mine[{index}]': {err}") from err
    mined = mine_pairs(texts, load_lexicons(config.pairs.mine_lexicons))
    if not mined.pairs:
        raise QueerbiasError(f"config key 'pairs.mine': no sentence of {', '.join(config.pairs.mine)} names an "
                             "identity group the lexicons can swap; nothing to train on")
    if config.data.identities:
        named = {key.split("/", 1)[1] for key in mined.pairs_per_group}
        for group in config.data.identities:
            if not targeted([group]) & named:
                raise QueerbiasError(f"config key 'pairs.mine': no mined pair names {group} "
                                     "(config key 'data.identities'); add text that mentions it")
    return mined_pair_set(mined, "mined:" + "+".join(config.pairs.mine), "mined")


class PairBatches:
    """Seeded pair batches: the batch for (step, micro-batch, process) is always the same,
    so a resumed run draws what an uninterrupted one would.

    Balanced batches take turns over the groups, so a group's mean in the group terms
    rests on as many pairs as the batch allows. With `groups_per_batch` = k, each batch
    holds k groups (pairs_per_batch / k pairs each): a group's mean then rests on several
    pairs at the cost of one pair per group. The groups take turns in a shuffled cycle,
    so every group is drawn equally often.
    """

    def __init__(self, pairs: Sequence[Pair], pairs_per_batch: int, balance: bool, seed: int,
                 groups_per_batch: int | None = None, accumulation: int = 1, processes: int = 1):
        self.pairs, self.pairs_per_batch, self.balance, self.seed = list(pairs), pairs_per_batch, balance, seed
        self.accumulation, self.processes = accumulation, processes
        self.by_group: dict[str, list[Pair]] = {}
        for pair in self.pairs:
            self.by_group.setdefault(pair.group, []).append(pair)
        self.groups_per_batch = min(groups_per_batch or len(self.by_group), len(self.by_group))

    def draw(self, step: int, micro: int, process: int) -> list[Pair]:
        rng = seeded_rng(self.seed, step, micro, process)
        if not self.balance:
            return rng.sample(self.pairs, min(self.pairs_per_batch, len(self.pairs)))
        groups = self._groups(step, micro, process)
        pools = {g: rng.sample(self.by_group[g], len(self.by_group[g])) for g in groups}
        batch: list[Pair] = []
        while len(batch) < self.pairs_per_batch and any(pools.values()):
            for group in groups:
                if pools[group] and len(batch) < self.pairs_per_batch:
                    batch.append(pools[group].pop())
        return batch

    def _groups(self, step: int, micro: int, process: int) -> list[str]:
        index = (step * self.accumulation + micro) * self.processes + process  # draws so far
        return groups_in_turn(list(self.by_group), self.groups_per_batch, index, self.seed)


def seeded_rng(seed: int, *parts) -> random.Random:
    """A generator for one key (seed, step, micro-batch, process, ...): the same key, the same draws."""
    key = "/".join(map(str, (seed, *parts))).encode()
    return random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))


def groups_in_turn(groups: list[str], k: int, index: int, seed: int) -> list[str]:
    """The k groups of draw number `index`: a window of a per-cycle shuffle of all groups, so every group is
    drawn equally often; the last window of a cycle wraps around."""
    order = sorted(groups)
    cycle_number, position = divmod(index, -(-len(order) // k))
    seeded_rng(seed, "cycle", cycle_number).shuffle(order)
    window = order[position * k:(position + 1) * k]
    return window + order[:k - len(window)]
