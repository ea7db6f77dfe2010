"""GRUFF instances: every template combination as the paper builds them, and balanced samples.

Settings (Mewes, Lauscher & Gautam 2026; upstream scripts baseline_task.py,
add_context.py, sample_templates.py):

- ``none``: the task sentence alone; the gap agrees with the noun's grammatical system.
- ``d0``: an explicit introduction of the occupation with its pronoun, then the task.
- ``d1``: plus an explicit introduction of the participant (another noun system, so
  another pronoun) of opposite polarity and different content.
- ``d2``..``d5``: plus 1-4 implicit sentences about the participant, same polarity as
  its introduction, each template at most once, in every order (permutations).

Context templates are always those of the task's gap case. Within one stratum
(occupation, case, target system, distractor system) the instances are numbered in
a fixed order, so a sample is a set of indices and no setting is ever materialised
in full (d4 and d5 have millions of instances). Counts, for T task templates, S noun
systems and C context templates per case with m per polarity:

    none  T*S
    d0    T*C*S
    d1    T*C*(m-1)*S*(S-1)
    d1+q  T*C*(m-1)*S*(S-1)*P(m-1, q)     (q implicit sentences, P = permutations)

`count_instances` computes them from the templates for any template set; the
closed forms hold when every (case, polarity) has m templates (tested).
"""

from __future__ import annotations

import bisect
import math
import random
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from itertools import accumulate

from queerbias.errors import QueerbiasError
from queerbias.suites.gruff.forms import (
    PLACEHOLDERS,
    PRONOUN_SETS,
    SYSTEMS,
    agreeing,
    options,
    pairing,
    pronoun,
    referent,
)
from queerbias.suites.gruff.templates import (
    CONTEXT_REFERENT,
    TASK_REFERENT,
    ContextTemplate,
    TaskTemplate,
    TemplateSet,
)

SETTINGS = ("none", "d0", "d1", "d2", "d3", "d4", "d5")


def n_distractors(setting: str) -> int | None:
    """Sentences about the participant: None without context, else 0-5."""
    return None if setting == "none" else int(setting[1:])


@dataclass(frozen=True)
class GenerationConfig:
    """What to generate; recorded in every result so runs on different items never mix.

    n: items per setting and replicate, taken evenly across (case, target, distractor)
    cells from the balanced sample (None: the whole balanced sample, as the paper).
    replicates: independent balanced samples (the paper draws 3).
    """

    settings: tuple[str, ...] = SETTINGS
    pairing: str = "default"
    n: int | None = None
    seed: int = 0
    replicates: int = 1

    def __post_init__(self):
        unknown = [s for s in self.settings if s not in SETTINGS]
        if unknown or not self.settings:
            raise QueerbiasError(f"unknown settings {unknown}; choose from {SETTINGS}")
        pairing(self.pairing)  # validates the name
        if self.n is not None and self.n < 1:
            raise QueerbiasError("n must be at least 1")
        if self.replicates < 1:
            raise QueerbiasError("replicates must be at least 1")

    def to_dict(self) -> dict:
        return {**asdict(self), "settings": list(self.settings)}


@dataclass(frozen=True)
class Instance:
    """One forced-choice item: context sentences, then the task sentence with its gap."""

    item_id: str
    setting: str
    occupation: str
    participant: str
    case: str
    system: str
    target: str
    distractor_system: str | None
    distractor: str | None
    context: tuple[str, ...]
    task: str  # the task sentence, gap still as its placeholder
    replicate: int = 0

    @property
    def n_distractors(self) -> int | None:
        return n_distractors(self.setting)

    def texts(self) -> list[str]:
        """The full text with each option in the gap, in PRONOUN_SETS order."""
        return [" ".join((*self.context, task)) for task in self.tasks()]

    def tasks(self) -> list[str]:
        """The task sentence with each option in the gap, in PRONOUN_SETS order."""
        return [self.task.replace(PLACEHOLDERS[self.case], form) for form in options(self.case)]

    @property
    def gold(self) -> int:
        return PRONOUN_SETS.index(self.target)

    @property
    def accepted(self) -> tuple[str, ...]:
        """Answers scored correct: the referent's pronoun set once a context introduced it;
        without context any set the noun agrees with (paper Sec. 6: de-e and Sternchen
        nouns take en or xier)."""
        return agreeing(self.system) if self.setting == "none" else (self.target,)


# -- strata: the instances of one (occupation, case, target, distractor) cell ------------

@dataclass(frozen=True)
class _Combo:
    """Task and introductions of some instances; `weight` orders of implicit sentences follow."""

    task: TaskTemplate
    intro: ContextTemplate | None
    second: ContextTemplate | None
    implicit: tuple[ContextTemplate, ...]
    weight: int


@dataclass(frozen=True)
class Stratum:
    occupation: str
    case: str
    system: str
    distractor_system: str | None
    combos: tuple[_Combo, ...]

    @property
    def size(self) -> int:
        return sum(c.weight for c in self.combos)


def strata(templates: TemplateSet, setting: str) -> list[Stratum]:
    """Every stratum of a setting, in a fixed order (template order, then systems)."""
    d = n_distractors(setting)
    by_cell: dict[tuple[str, str], list[TaskTemplate]] = defaultdict(list)
    for task in templates.tasks:
        by_cell[(task.occupation, task.case)].append(task)
    out = []
    for (occupation, case), tasks in by_cell.items():
        contexts = templates.contexts_for(case)
        combos = _combos(tasks, contexts, d)
        for system in SYSTEMS:
            others = [None] if d is None or d == 0 else [u for u in SYSTEMS if u != system]
            for other in others:
                out.append(Stratum(occupation, case, system, other, combos))
    return out


def _combos(tasks: list[TaskTemplate], contexts: tuple[ContextTemplate, ...], d: int | None) -> tuple[_Combo, ...]:
    if d is None:
        return tuple(_Combo(t, None, None, (), 1) for t in tasks)
    if d == 0:
        return tuple(_Combo(t, i, None, (), 1) for t in tasks for i in contexts)
    combos = []
    for t in tasks:
        for i in contexts:
            for j in contexts:
                if j.polarity == i.polarity or j.content == i.content:
                    continue  # opposite polarity, another situation
                candidates = tuple(k for k in contexts if k.polarity == j.polarity and k not in (i, j))
                combos.append(_Combo(t, i, j, candidates, math.perm(len(candidates), d - 1)))
    return tuple(c for c in combos if c.weight)


def count_instances(templates: TemplateSet, setting: str) -> int:
    """How many distinct instances a setting has for these templates."""
    return sum(s.size for s in strata(templates, setting))


def closed_form_count(n_tasks: int, per_polarity: int, setting: str, n_systems: int = len(SYSTEMS)) -> int:
    """The module docstring's formulas for templates with `per_polarity` contexts per case and polarity."""
    d, m, s = n_distractors(setting), per_polarity, n_systems
    if d is None:
        return n_tasks * s
    if d == 0:
        return n_tasks * 2 * m * s
    return n_tasks * 2 * m * (m - 1) * s * (s - 1) * math.perm(m - 1, d - 1)


def per_stratum(setting: str) -> int | None:
    """Items drawn per stratum in the balanced sample (None: all of them).

    d0 strata have no distractor system, so S-1 items each make every setting the
    same size as the distractor settings: O*4*S*(S-1) (60 occupations: 2,880).
    """
    d = n_distractors(setting)
    if d is None:
        return None
    return len(SYSTEMS) - 1 if d == 0 else 1


# -- building instances -----------------------------------------------------------------

def instance(stratum: Stratum, index: int, setting: str, pairing_name: str = "default") -> Instance:
    """The `index`-th instance of a stratum (0 <= index < stratum.size)."""
    bounds = list(accumulate(c.weight for c in stratum.combos))
    position = bisect.bisect_right(bounds, index)
    combo = stratum.combos[position]
    rank = index - (bounds[position - 1] if position else 0)
    implicit = unrank_permutation(rank, combo.implicit, n_distractors(setting) - 1) if combo.second else ()
    pairs = pairing(pairing_name)
    target = pairs[stratum.system]
    distractor = pairs[stratum.distractor_system] if stratum.distractor_system else None
    case = stratum.case
    occupation = referent(stratum.occupation, stratum.system)
    context = []
    id_parts = [setting, f"t{combo.task.row}", stratum.system]
    if combo.intro is not None:
        context.append(_explicit(combo.intro, occupation.phrase, pronoun(target, case)))
        id_parts.append(f"e{combo.intro.row}")
    if combo.second is not None:
        participant = referent(combo.task.participant, stratum.distractor_system)
        context.append(_explicit(combo.second, participant.phrase, pronoun(distractor, case)))
        context += [_capital(k.implicit.replace(PLACEHOLDERS[case], pronoun(distractor, case))) for k in implicit]
        id_parts += [stratum.distractor_system, f"e{combo.second.row}", *(f"i{k.row}" for k in implicit)]
    task = _capital(combo.task.sentence.replace(TASK_REFERENT, occupation.phrase))
    return Instance(":".join(id_parts), setting, stratum.occupation, combo.task.participant, case,
                    stratum.system, target, stratum.distractor_system, distractor, tuple(context), task)


def unrank_permutation(rank: int, items: tuple, length: int) -> tuple:
    """The `rank`-th `length`-permutation of `items` in itertools.permutations order."""
    pool, chosen = list(items), []
    for position in range(length):
        block = math.perm(len(pool) - 1, length - position - 1)
        index, rank = divmod(rank, block)
        chosen.append(pool.pop(index))
    return tuple(chosen)


def _explicit(template: ContextTemplate, phrase: str, form: str) -> str:
    return _capital(template.explicit.replace(CONTEXT_REFERENT, phrase).replace(PLACEHOLDERS[template.case], form))


def _capital(sentence: str) -> str:
    return sentence[:1].upper() + sentence[1:]


# -- enumeration and sampling -----------------------------------------------------------

def enumerate_setting(templates: TemplateSet, setting: str, pairing_name: str = "default") -> Iterator[Instance]:
    """Every instance of a setting (millions for d4/d5: stream, do not collect)."""
    for stratum in strata(templates, setting):
        for index in range(stratum.size):
            yield instance(stratum, index, setting, pairing_name)


def sample_setting(templates: TemplateSet, setting: str, config: GenerationConfig, replicate: int = 0) -> list[Instance]:
    """The balanced sample of one setting: `per_stratum` items drawn uniformly from each stratum.

    Each stratum has its own generator (seeded by seed, replicate, setting and the
    stratum), so a stratum's items do not depend on which other templates exist.
    """
    k = per_stratum(setting)
    chosen = []
    for stratum in strata(templates, setting):
        key = f"{config.seed}/{replicate}/{setting}/{stratum.occupation}/{stratum.case}/{stratum.system}/{stratum.distractor_system}"
        size = stratum.size
        indices = range(size) if k is None or k >= size else sorted(random.Random(key).sample(range(size), k))
        chosen += [instance(stratum, i, setting, config.pairing) for i in indices]
    if config.n is not None:
        chosen = spread(chosen, config.n, random.Random(f"{config.seed}/{replicate}/{setting}/n"))
    return [replace(item, replicate=replicate) for item in chosen]


def spread(items: list[Instance], n: int, rng: random.Random) -> list[Instance]:
    """n items taken round-robin over (case, target, distractor) cells, balanced within a round.

    Every cell gives its next item before any gives a second; within a round the
    next cell is the one whose case and pronoun set have been used least so far
    (ties in a seeded order), so even a partial round, e.g. 32 of the 48 d1 cells,
    covers cases and pronoun sets evenly. A plain random subset would not.
    """
    queues: dict[tuple, list[Instance]] = defaultdict(list)
    for item in items:
        queues[(item.case, item.target, item.distractor or "")].append(item)
    cells = sorted(queues)
    rng.shuffle(cells)
    for cell in cells:
        rng.shuffle(queues[cell])
    used: Counter = Counter()
    seen = [Counter() for _ in range(3)]
    chosen = []
    while len(chosen) < n and any(used[c] < len(queues[c]) for c in cells):
        cell = min((c for c in cells if used[c] < len(queues[c])),
                   key=lambda c: (used[c], seen[0][c[0]] + seen[1][c[1]], seen[2][c[2]]))
        chosen.append(queues[cell][used[cell]])
        used[cell] += 1
        for counter, value in zip(seen, cell, strict=True):
            counter[value] += 1
    return chosen


def generate(templates: TemplateSet, config: GenerationConfig) -> list[Instance]:
    """All sampled instances of the configured settings and replicates."""
    return [item for replicate in range(config.replicates) for setting in config.settings
            for item in sample_setting(templates, setting, config, replicate)]
