"""The parts of a pair run's summary.json and of a pair comparison in delta.json: one list of names, which the
declaration (`figures`, `parts`, `judged`), the code that fills the parts and the tables, cards and criteria
that read them share, so that a renamed part is renamed everywhere at once.

- `distance`: the distance to indifference and its coin-flip floor (`distance`, `floor`)
- `pair_gap`: the pair-level gap |d| (`indifference`)
- `direction`: the stereotype excess and the groups that crossed 50 (`indifference`)
- `association`: the association c of sets with neutral predicates (`association`), where the set has them
- `shift`: the frame-level shift tests of a comparison (`association`)
"""

DISTANCE, PAIR_GAP, DIRECTION, ASSOCIATION, SHIFT = "distance", "pair_gap", "direction", "association", "shift"
#: in every comparison, and where the set has neutral predicates
PARTS, OPTIONAL_PARTS = (DISTANCE, PAIR_GAP, DIRECTION, SHIFT), (ASSOCIATION,)
