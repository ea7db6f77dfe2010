"""Training pairs of the pair objectives (equalise, dpo): the `pairs` section, loading, batches.

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
from dataclasses import dataclass

from queerbias.errors import QueerbiasError
from queerbias.options import option
from queerbias.pairs.mining import LEXICONS, load_lexicons, mine_pairs, mined_pair_set
from queerbias.pairs.registry import available_offline
from queerbias.pairs.resolve import load_pairs
from queerbias.pairs.schema import Pair, PairSet
from queerbias.train.corpus import targeted
from queerbias.train.data import read_texts

log = logging.getLogger(__name__)


@dataclass
class TrainingPairs:
    """The counterfactual pairs the pair objectives train on, and the held-out guard (config key `pairs`)."""

    train: str | list[str] | None = option(None, "a split side (`queerbias-de:train`), a registered pair set or a "
                                                 "pair file, or a list of them (e.g. [queerbias-de-frames:train, "
                                                 "winoqueer-v0:train])")
    train_optional: list[str] | None = option(None, "pair sets added when they are on this machine (cached or in "
                                                    "the shared data folder), else skipped with a warning")
    batch_size: int = option(32, "pairs per micro-batch (equalise)", ge=1)
    balance: bool = option(True, "draw every batch evenly over the identity groups (round-robin) rather than at "
                                 "random")
    groups_per_batch: int | None = option(None, "groups in one balanced batch (None = all): fewer groups, more "
                                                "pairs per group", ge=1)
    allow_overlap: bool = option(False, "let evaluation items share sentences with the training pairs; recorded "
                                        "in every summary")
    mine: list[str] | None = option(None, "also train on counterfactual pairs mined from real text "
                                          "(`pairs.mining`): corpus (the training corpus), or JSONL files / corpus "
                                          "folders; counts go into config.yaml's record")
    mine_lexicons: dict | None = option(None, "language (de, en) -> a CDA lexicon file for mining (default: the "
                                              "packaged ones)")


def check_training_pairs(config, objective, registered, require) -> None:
    """The `pairs` keys against the objective: pairs where it trains on them (given or mined),
    none where it does not, mining only where mined pairs can be trained on."""
    with_pairs = [o.name for o in registered if o.uses_pairs]
    miners = [o.name for o in registered if o.mined_pairs]
    require(not objective.uses_pairs or bool(config.pairs.train or config.pairs.mine), "pairs.train",
            f"is required for objective {objective.name} (training pairs, e.g. queerbias-de:train)")
    require(objective.uses_pairs or not config.pairs.train, "pairs.train",
            f"has no use for objective {objective.name} (only {' and '.join(with_pairs)} train on pairs)")
    twice = sorted({spec for _, spec in training_sources(config.pairs.train)} & set(config.pairs.train_optional or []))
    require(not twice, "pairs.train_optional", f"repeats {', '.join(twice)} of pairs.train (its pairs would count twice)")
    require(objective.mined_pairs or not config.pairs.mine, "pairs.mine",
            f"applies to objective {' and '.join(miners)} (mined pairs have no preference triples for dpo)")
    require(config.pairs.mine is None or bool(config.pairs.mine), "pairs.mine",
            "is empty; leave it out, or name sources (corpus, a JSONL file or corpus folder)")
    for language in config.pairs.mine_lexicons or {}:
        require(language in LEXICONS, f"pairs.mine_lexicons.{language}",
                f"names a language without mining support; known: {', '.join(LEXICONS)}")


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


def training_sources(train: str | list[str] | None) -> list[tuple[str, str]]:
    """(config key, pair spec) of each configured training pair set."""
    if not train:
        return []
    if isinstance(train, str):
        return [("pairs.train", train)]
    return [(f"pairs.train[{index}]", spec) for index, spec in enumerate(train)]


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
