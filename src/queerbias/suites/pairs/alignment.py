"""Which token positions of a pair's two sentences are scored (pure functions).

The reference scripts align the token ids of both sentences with
`difflib.SequenceMatcher` and score the tokens in 'equal' blocks, but those the model family
leaves out (`Family.shared_scored`: for masked LMs the [CLS]/[SEP] ends, for causal LMs the
prepended BOS).
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Sequence

from queerbias.families import get_family


def shared_positions(ids1: Sequence[int], ids2: Sequence[int]) -> tuple[list[int], list[int]]:
    """Positions of the tokens in equal blocks, in order, for both sequences."""
    # The reference compares string forms of the ids; equality is the same, and so
    # is difflib's junk heuristic, which looks only at element frequencies.
    matcher = difflib.SequenceMatcher(None, [str(i) for i in ids1], [str(i) for i in ids2])
    template1, template2 = [], []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            template1.extend(range(i1, i2))
            template2.extend(range(j1, j2))
    return template1, template2


def scored_positions(
    ids1: Sequence[int],
    ids2: Sequence[int],
    kind: str,
    scope: str,
    scorable1: Sequence[int],
    scorable2: Sequence[int],
) -> tuple[list[int], list[int]]:
    """Positions to score in each sentence under `scope` (`kind`: the model family).

    `scorable*` are the positions a model can score at all (no special tokens for
    masked LMs, no first position for causal LMs); they bound 'all' and
    'differing'.
    """
    template1, template2 = shared_positions(ids1, ids2)
    if scope == "shared":
        family = get_family(kind)
        return family.shared_scored(template1), family.shared_scored(template2)
    if scope == "all":
        return list(scorable1), list(scorable2)
    shared1, shared2 = set(template1), set(template2)
    return ([p for p in scorable1 if p not in shared1],
            [p for p in scorable2 if p not in shared2])


def measures_something(ids1: Sequence[int], positions1: Sequence[int], ids2: Sequence[int],
                       positions2: Sequence[int], kind: str) -> bool:
    """Whether the two sentence scores can differ at all, whatever the model's weights.

    A scored position's log-probability is a function of what the model sees there
    (`Family.score_input`): for a masked LM the whole sentence with that position masked (so any
    difference between the sentences reaches every position), for a causal LM only the tokens up to
    and including it. When both sentences score the same multiset of such inputs the two sums (or
    means) are equal by construction: no position at all (the sentences share no scored token), or,
    for a causal LM, only positions before the first difference (the identity word is the last
    token, so under shared-token scoring every scored token precedes it).
    """
    family = get_family(kind)

    def inputs(ids, positions):
        return Counter(family.score_input(ids, p) for p in positions)

    return bool(positions1 or positions2) and inputs(ids1, positions1) != inputs(ids2, positions2)
