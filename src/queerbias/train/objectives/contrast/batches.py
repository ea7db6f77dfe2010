"""The contrast objective's batches: (group, frame) cells with stereotype and neutral pairs, and mined pairs.

A cell's association c needs the stereotype and the neutral pairs of one group, one frame and one pair of
phrases in the same batch. `CellBatches` draws, for (step, micro-batch, process), `cells` cells of different groups (the groups
in a shuffled cycle, so every group is drawn equally often, as `train.pair_batches.PairBatches` does) and from
each some stereotype and some neutral pairs, plus pairs mined from the corpus for the anchor: always the
same draw for the same key, so a resumed run draws what an uninterrupted one would.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from queerbias.errors import QueerbiasError
from queerbias.pairs.schema import NEUTRAL, STEREOTYPE, Pair
from queerbias.train.pair_batches import groups_in_turn, seeded_rng


@dataclass(frozen=True)
class Cell:
    """One (group, frame, identity phrase against counterfactual phrase) of the training pairs: its stereotype
    and its neutral pairs. The phrases belong to the cell because a group may be named in several ways
    ("trans Menschen", "Transmenschen"): a stereotype pair of one phrase against a neutral pair of another
    would leave the difference of the two phrases' own terms in c, and training on it moves the phrases."""

    group: str
    frame: str
    phrases: tuple[str, str]
    stereotypes: tuple[Pair, ...]
    neutral: tuple[Pair, ...]


def swapped_phrases(pair: Pair) -> tuple[str, str]:
    """What the two sentences of a pair do not share: the identity phrase and its counterfactual, as the
    characters between their common beginning and their common end."""
    more, less = pair.sent_more, pair.sent_less
    start = next((i for i, (a, b) in enumerate(zip(more, less)) if a != b), min(len(more), len(less)))
    end = 0
    while end < min(len(more), len(less)) - start and more[-1 - end] == less[-1 - end]:
        end += 1
    return more[start:len(more) - end], less[start:len(less) - end]


@dataclass(frozen=True)
class ContrastBatch:
    """One draw: per cell its stereotype and neutral pairs, and the mined pairs the anchor reads."""

    cells: tuple[Cell, ...]
    mined: tuple[Pair, ...]

    @property
    def pairs(self) -> list[Pair]:
        """Every pair of the batch: the cells' stereotypes, their neutral pairs, then the mined ones."""
        return [*(p for c in self.cells for p in c.stereotypes), *(p for c in self.cells for p in c.neutral),
                *self.mined]


def cells_of(pairs: Sequence[Pair]) -> tuple[list[Cell], list[Pair]]:
    """The training pairs as cells (every (group, frame, phrases) holding both kinds of pair) and the pairs without
    a frame (mined from the corpus), refusing a set with no cell: without neutral predicates there is no c to
    train."""
    found: dict[tuple[str, str, tuple[str, str]], dict[str, list[Pair]]] = {}
    unframed = []
    for pair in pairs:
        if not pair.frame:
            unframed.append(pair)
            continue
        key = (pair.group, pair.frame, swapped_phrases(pair))
        found.setdefault(key, {STEREOTYPE: [], NEUTRAL: []})[pair.predicate_kind].append(pair)
    cells = [Cell(group, frame, phrases, tuple(kinds[STEREOTYPE]), tuple(kinds[NEUTRAL]))
             for (group, frame, phrases), kinds in found.items() if kinds[STEREOTYPE] and kinds[NEUTRAL]]
    if not cells:
        raise QueerbiasError("config key 'pairs.train': objective contrast needs pairs whose frames hold stereotype "
                             "and neutral predicates of one group (e.g. queerbias-de-contrast:train); none do")
    return cells, unframed


class CellBatches:
    """Seeded contrast batches (the module's docstring): `cells` groups with `per_group` cells each, every cell
    with up to `stereotypes` stereotype and `neutral` neutral pairs, and `mined` pairs mined from the corpus."""

    def __init__(self, pairs: Sequence[Pair], cells: int, stereotypes: int, neutral: int, mined: int, seed: int,
                 accumulation: int = 1, processes: int = 1, per_group: int = 1):
        found, self.mined = cells_of(pairs)
        self.by_group: dict[str, list[Cell]] = {}
        for cell in found:
            self.by_group.setdefault(cell.group, []).append(cell)
        self.cells, self.stereotypes, self.neutral = min(cells, len(self.by_group)), stereotypes, neutral
        self.mined_per_batch, self.seed, self.per_group = mined, seed, per_group
        self.accumulation, self.processes = accumulation, processes

    def draw(self, step: int, micro: int, process: int) -> ContrastBatch:
        rng = seeded_rng(self.seed, step, micro, process)
        chosen = []
        for group in self._groups(step, micro, process):
            found = self.by_group[group]
            for cell in rng.sample(found, min(self.per_group, len(found))):
                    chosen.append(Cell(cell.group, cell.frame, cell.phrases,
                                   tuple(rng.sample(cell.stereotypes, min(self.stereotypes, len(cell.stereotypes)))),
                                   tuple(rng.sample(cell.neutral, min(self.neutral, len(cell.neutral))))))
        mined = tuple(rng.sample(self.mined, min(self.mined_per_batch, len(self.mined))))
        return ContrastBatch(tuple(chosen), mined)

    def _groups(self, step: int, micro: int, process: int) -> list[str]:
        index = (step * self.accumulation + micro) * self.processes + process  # draws so far
        return groups_in_turn(list(self.by_group), self.cells, index, self.seed)
