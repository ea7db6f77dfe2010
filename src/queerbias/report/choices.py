"""Names of the selectable methods, importable without numpy or scipy.

The CLI imports every command module at start-up to build its parser; listing the
choices here keeps `queerbias --help` fast while the statistics load only when used.
(Best-checkpoint criteria are each suite's, `Suite.criteria`.)
"""

SOFT_TESTS = ("wilcoxon", "ttest")
CORRECTIONS = ("holm", "bh")
