"""Exact hashes, MinHash estimates and the LSH index."""

from __future__ import annotations

import random

import numpy as np
import pytest

from queerbias.corpus.dedupe import (
    MinHasher,
    NearDuplicateIndex,
    content_hash,
    lsh_bands,
    shingles,
)

WORDS = [f"wort{i}" for i in range(3000)]


def random_text(rng: random.Random, n: int = 200) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def edit(text: str, rng: random.Random, changes: int) -> str:
    words = text.split()
    for position in rng.sample(range(len(words)), changes):
        words[position] = "neu"
    return " ".join(words)


def jaccard(a: str, b: str, size: int = 5) -> float:
    sa, sb = shingles(a, size), shingles(b, size)
    return len(sa & sb) / len(sa | sb)


def test_exact_hash_ignores_case_width_and_whitespace():
    assert content_hash("Queere  Geschichte\nin Köln") == content_hash("queere geschichte in köln ")
    assert content_hash("Ｑｕｅｅｒ") == content_hash("queer")  # NFKC folds full-width letters
    assert content_hash("queer") != content_hash("queer!")


def test_short_texts_have_one_shingle():
    assert shingles("Hallo, Welt!", 5) == {"hallo welt"}
    assert shingles("", 5) == set()


def test_minhash_estimates_jaccard():
    rng = random.Random(3)
    hasher = MinHasher(num_perm=256, shingle_size=5, seed=7)
    for changes in (2, 8, 20):
        a = random_text(rng)
        b = edit(a, rng, changes)
        estimate = float(np.mean(hasher.signature(a) == hasher.signature(b)))
        assert abs(estimate - jaccard(a, b)) < 0.1


@pytest.mark.parametrize("threshold", [0.5, 0.8, 0.9])
def test_lsh_bands_put_the_s_curve_at_the_threshold(threshold):
    bands, rows = lsh_bands(threshold, 128)
    assert bands * rows <= 128
    at = lambda s: 1 - (1 - s**rows) ** bands  # noqa: E731 - probability of becoming a candidate
    assert at(threshold - 0.2) < 0.25 and at(min(threshold + 0.1, 1.0)) > 0.75


def test_index_flags_near_duplicates_and_keeps_distinct_texts():
    rng = random.Random(11)
    index = NearDuplicateIndex(threshold=0.8)
    originals = [random_text(rng) for _ in range(50)]
    assert [index.add(f"d{i}", text) for i, text in enumerate(originals)] == [None] * 50

    close = edit(originals[7], rng, 2)  # Jaccard about 0.9
    far = edit(originals[8], rng, 25)  # Jaccard about 0.3
    assert jaccard(originals[7], close) > 0.85 and jaccard(originals[8], far) < 0.5
    assert index.add("close", close) == "d7"
    assert index.add("far", far) is None
    assert len(index) == 51


def test_threshold_must_be_a_similarity():
    with pytest.raises(ValueError, match="threshold"):
        NearDuplicateIndex(threshold=1.5)
