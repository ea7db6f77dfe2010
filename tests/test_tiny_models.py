"""The tiny test models are the same models on every build (issue 33): same weights, same vocabulary
in the same order, byte for byte, whatever process builds them."""

from __future__ import annotations

import pytest

from tiny_models import BUILDERS, learn_merges


@pytest.mark.parametrize("family", sorted(BUILDERS))
def test_every_builder_builds_the_same_model_twice(family, tiny_family, tmp_path):
    first = tiny_family(family)
    second = BUILDERS[family](tmp_path / family)
    files = sorted(path.name for path in first.iterdir())
    assert files == sorted(path.name for path in second.iterdir())
    assert [name for name in files if (first / name).read_bytes() != (second / name).read_bytes()] == []


def test_merges_break_ties_by_the_pair_not_by_hash_order():
    from collections import Counter

    words = Counter({("b", "a"): 2, ("a", "b"): 2, ("c", "d"): 1})
    assert learn_merges(words, 3) == [("a", "b"), ("b", "a"), ("c", "d")]
    assert learn_merges(Counter(dict(reversed(list(words.items())))), 3) == learn_merges(words, 3)
