"""Split keys of English WinoQueer v0: the predicate a pair's sentences share.

v0 pairs are templates filled with first names and pronouns ("Michael held hands with
Kimberly." / "... with Steven."). A held-out split must keep whole predicates apart, not
pairs: the `predicate` key is the sentence with every name and pronoun replaced by "_"
("_ held hands with _."), the same for both sentences of a pair. `winoqueer-v0:train` /
`:test` split by it (the default seed puts "_ held hands with _." and a third of the
adjective templates on the test side, "_ is divorcing _." on the train side).
"""

from __future__ import annotations

import re

from queerbias.pairs.schema import PairSet

_PRONOUNS = re.compile(r"\b(he|she|they|him|her|them|his|hers|their|zie|ze|xe|hir|xem|xir|ey|em|eir|fae|faer)\b",
                       re.IGNORECASE)
_NAME = re.compile(r"\b[A-Z][a-z]+\b")
_ARE = re.compile(r"\bare\b")  # "They are very kind." shares its predicate with "He is very kind."


def predicate(sentence: str) -> str:
    """The sentence with names and pronouns replaced by "_" (and "are" by "is")."""
    return _ARE.sub("is", _NAME.sub("_", _PRONOUNS.sub("_", sentence.strip())))


def split_keys(pair_set: PairSet) -> dict[str, dict[str, str]]:
    """pair id -> {"predicate": ...} (both sentences' predicates, joined where they differ)."""
    keys = {}
    for pair in pair_set.pairs:
        more, less = predicate(pair.sent_more), predicate(pair.sent_less)
        keys[pair.pair_id] = {"predicate": more if more == less else f"{more} | {less}"}
    return keys
