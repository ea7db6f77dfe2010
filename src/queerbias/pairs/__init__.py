"""Sentence-pair benchmarks: the schema, readers for published layouts, the registry."""

from queerbias.pairs.schema import Pair, PairSet

__all__ = ["Pair", "PairSet"]
