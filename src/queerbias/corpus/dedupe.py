"""Exact and near-duplicate detection for corpus documents.

Exact duplicates share the hash of their normalised text (zero-width and bidi characters
removed, Unicode NFKC, case-folded, whitespace collapsed): reposts, the same agency text
in two feeds, a copy with an invisible character slipped in.

Near duplicates (an article and its lightly edited update, a post quoted with one
word changed) are found with MinHash over word shingles plus locality-sensitive
hashing (LSH), as in Broder (1997) and Leskovec et al., "Mining of Massive
Datasets", ch. 3. Candidates from the LSH buckets are confirmed by the Jaccard
similarity estimated from the full signatures, so the banding only decides which
pairs are compared, not which are dropped.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

import numpy as np

from queerbias.text.scrub import remove_invisible

_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")
_MERSENNE_61 = np.uint64((1 << 61) - 1)
_LOW_32 = np.uint64(0xFFFFFFFF)
_CHUNK = 4096  # shingles per vectorised step, bounds memory on very long texts


def normalise(text: str) -> str:
    """The text as compared for duplicates: no invisible characters, NFKC, case-folded, single spaces."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", remove_invisible(text)).casefold()).strip()


def content_hash(text: str) -> bytes:
    """16-byte digest of the normalised text; equal digests mean exact duplicates."""
    return hashlib.blake2b(normalise(text).encode("utf-8"), digest_size=16).digest()


def shingles(text: str, size: int) -> set[str]:
    """Word n-grams of the normalised text; texts shorter than `size` give one shingle."""
    words = _WORD.findall(normalise(text))
    if len(words) <= size:
        return {" ".join(words)} if words else set()
    return {" ".join(words[i:i + size]) for i in range(len(words) - size + 1)}


def lsh_bands(threshold: float, num_perm: int) -> tuple[int, int]:
    """(bands, rows) whose S-curve best separates pairs above and below `threshold`.

    Minimises the area of false positives below the threshold plus false negatives
    above it, the usual criterion (also used by datasketch).
    """
    grid = np.linspace(0.0, 1.0, 1001)
    below, above = grid <= threshold, grid >= threshold
    best, best_error = (1, num_perm), float("inf")
    for bands in range(1, num_perm + 1):
        rows = num_perm // bands
        candidate = 1.0 - (1.0 - grid**rows) ** bands
        error = np.trapezoid(candidate[below], grid[below]) + np.trapezoid(
            1.0 - candidate[above], grid[above])
        if error < best_error:
            best, best_error = (bands, rows), error
    return best


class MinHasher:
    """MinHash signatures from universal hashes h(x) = (a*x + b) mod (2^61 - 1).

    Shingles are hashed to 32 bits, `a` and `b` drawn below 2^32, so a*x + b stays
    below 2^64 and uint64 arithmetic never wraps.
    """

    def __init__(self, num_perm: int = 128, shingle_size: int = 5, seed: int = 1):
        rng = np.random.default_rng(seed)
        self.num_perm, self.shingle_size = num_perm, shingle_size
        self._a = rng.integers(1, 1 << 32, size=num_perm, dtype=np.uint64)
        self._b = rng.integers(0, 1 << 32, size=num_perm, dtype=np.uint64)

    def signature(self, text: str) -> np.ndarray:
        hashes = np.fromiter(
            (int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=4).digest(), "little")
             for s in shingles(text, self.shingle_size)),
            dtype=np.uint64,
        )
        signature = np.full(self.num_perm, 0xFFFFFFFF, dtype=np.uint64)
        for start in range(0, len(hashes), _CHUNK):
            chunk = hashes[start:start + _CHUNK, None]
            values = ((chunk * self._a + self._b) % _MERSENNE_61) & _LOW_32
            np.minimum(signature, values.min(axis=0), out=signature)
        return signature.astype(np.uint32)


class NearDuplicateIndex:
    """Remembers kept documents and reports whether a new one nearly repeats one of them."""

    def __init__(self, threshold: float = 0.8, num_perm: int = 128, shingle_size: int = 5,
                 seed: int = 1):
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"near-duplicate threshold must be in (0, 1], got {threshold}")
        self.threshold = threshold
        self.hasher = MinHasher(num_perm, shingle_size, seed)
        self.bands, self.rows = lsh_bands(threshold, num_perm)
        self._tables: list[dict[bytes, list[int]]] = [{} for _ in range(self.bands)]
        self._signatures: list[np.ndarray] = []
        self._keys: list[str] = []

    def __len__(self) -> int:
        return len(self._keys)

    def add(self, key: str, text: str) -> str | None:
        """Index `text` under `key` unless it nearly duplicates an indexed text.

        Returns the key of the earlier near duplicate (and indexes nothing), or None.
        """
        signature = self.hasher.signature(text)
        band_keys = [signature[i * self.rows:(i + 1) * self.rows].tobytes()
                     for i in range(self.bands)]
        candidates = {index for table, band in zip(self._tables, band_keys)
                      for index in table.get(band, ())}
        for index in sorted(candidates):
            if np.mean(self._signatures[index] == signature) >= self.threshold:
                return self._keys[index]
        position = len(self._keys)
        self._keys.append(key)
        self._signatures.append(signature)
        for table, band in zip(self._tables, band_keys):
            table.setdefault(band, []).append(position)
        return None
