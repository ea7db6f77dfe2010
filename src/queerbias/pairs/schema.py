"""The in-memory form of a pair benchmark, whatever file layout it came from."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, fields

from queerbias.errors import DataError, QueerbiasError
from queerbias.text.labels import label_problem, sentence_problem

#: what a pair's predicate is (`Pair.predicate_kind`): a stereotype, or a neutral predicate filling the same frame
STEREOTYPE, NEUTRAL = "stereotype", "neutral"
PREDICATE_KINDS = (STEREOTYPE, NEUTRAL)
#: what separates the labels of a pair that targets several groups, in a file's group column ("Lesbian; Non-binary")
#: and in a run's `other_groups` column (written with the first)
GROUP_SEPARATORS = ";,"
_SEPARATOR = re.compile(f"[{re.escape(GROUP_SEPARATORS)}]")


def split_groups(value: str) -> list[str]:
    """The labels of one group cell, in order ("Lesbian; Non-binary" -> ["Lesbian", "Non-binary"])."""
    return [label.strip() for label in _SEPARATOR.split(value) if label.strip()]


@dataclass(frozen=True)
class Pair:
    """One minimal pair: `sent_more` is the stereotypical sentence, `sent_less` its counterfactual.

    `direction` keeps CrowS-Pairs' `stereo_antistereo`: the reference scripts feed an
    antistereo pair to the aligner as (sent_less, sent_more), and the order matters
    for `difflib`, so exact reproduction needs it.

    Three annotations serve the association measure (`suites.pairs.association`, issue 52);
    the paper's scores ignore them. `frame` names the sentence frame the pair fills (the unit
    of the association and of the frame-level tests); `predicate_kind` says whether the frame
    is filled with a stereotype or with a neutral predicate (the reference its stereotypes are
    measured against); `phrase_end` is the character offset in `sent_more` where the identity
    phrase ends, so that d splits into the phrase's own term and the predicate's.

    `other_groups` are the further groups a statement targets: the survey set's 387 pairs carry
    902 group labels (Morch & Braun, Appendix C.2). `group` is the first label; per-group figures
    count the pair in each of `groups`, Overall once.
    """

    pair_id: str
    sent_more: str
    sent_less: str
    group: str
    counterfactual_group: str = ""
    category: str = ""
    direction: str = "stereo"
    frame: str = ""
    predicate_kind: str = STEREOTYPE
    phrase_end: int | None = None
    other_groups: tuple[str, ...] = ()
    source_row: int | None = None

    @property
    def aligned_order(self) -> tuple[str, str]:
        """The (sent1, sent2) order in which the reference scripts align and score."""
        if self.direction == "antistereo":
            return self.sent_less, self.sent_more
        return self.sent_more, self.sent_less

    @property
    def groups(self) -> tuple[str, ...]:
        """Every group the pair targets, the first (`group`) first."""
        return (self.group, *self.other_groups)

    @property
    def key(self) -> str:
        """Identity of a pair for resuming and pairing runs: its id and both texts."""
        raw = "\x1f".join((self.pair_id, self.sent_more, self.sent_less, self.direction))
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:24]


@dataclass
class PairSet:
    """A named list of pairs with the checksum that results record."""

    name: str
    pairs: list[Pair]
    source: str = ""
    checksum: str = ""
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        for index, pair in enumerate(self.pairs):
            check_pair(pair, self.source or self.name, index)
        if not self.checksum:
            self.checksum = content_checksum(self.pairs)

    def __len__(self) -> int:
        return len(self.pairs)

    def groups(self) -> list[str]:
        """Groups in order of first appearance (every label of a pair with several)."""
        return list(dict.fromkeys(group for p in self.pairs for group in p.groups))


def check_pair(pair: Pair, where: str, index: int) -> None:
    """The file reader's rules for a pair however it was made (a `PairSet` built in Python too):
    text fields are strings, sentences non-empty, different and without hidden characters, group
    labels NFKC-normalised and free of hidden characters and mixed scripts."""
    if not isinstance(pair, Pair):
        raise QueerbiasError(f"{where}: item {index} is a {type(pair).__name__}, not a Pair")
    name = f"pair {pair.pair_id}"
    for field_name in ("pair_id", "sent_more", "sent_less", "group", "counterfactual_group", "category",
                       "direction", "frame", "predicate_kind"):
        value = getattr(pair, field_name)
        if not isinstance(value, str):
            raise DataError(where, f"{name}: {field_name} must be text, got {type(value).__name__} {value!r}",
                            row=pair.source_row)
    for field_name in ("sent_more", "sent_less"):
        text = getattr(pair, field_name)
        problem = "is empty" if not text.strip() else sentence_problem(text)
        if problem:
            raise DataError(where, f"{name}: {field_name} {problem}", row=pair.source_row)
    labels = [("group", pair.group), ("counterfactual_group", pair.counterfactual_group)]
    if pair.other_groups != ():
        if not isinstance(pair.other_groups, tuple) or not all(isinstance(g, str) and g.strip()
                                                               for g in pair.other_groups):
            raise DataError(where, f"{name}: other_groups must be a tuple of non-empty labels, got "
                            f"{pair.other_groups!r}", row=pair.source_row)
        if len(set(pair.groups)) < len(pair.groups):
            raise DataError(where, f"{name}: a group is named twice among {', '.join(pair.groups)}",
                            row=pair.source_row)
        labels += [("other_groups", group) for group in pair.other_groups]
    for field_name, value in labels:
        if field_name == "group" and not value.strip():
            raise DataError(where, f"{name}: the group is empty", row=pair.source_row)
        if _SEPARATOR.search(value):
            raise DataError(where, f"{name}: {field_name} {value!r} holds one of {' '.join(GROUP_SEPARATORS)}, which "
                            "separate a pair's groups; give each group as its own label", row=pair.source_row)
        normal, problem = label_problem(value)
        if problem is None and normal != value:
            problem = f"is not in NFKC form (it reads as {normal!r}, a different string)"
        if problem:
            raise DataError(where, f"{name}: {field_name} {value!r} {problem}", row=pair.source_row)
    if pair.direction not in ("stereo", "antistereo"):
        raise DataError(where, f"{name}: direction must be 'stereo' or 'antistereo', got {pair.direction!r}",
                        row=pair.source_row)
    if pair.predicate_kind not in PREDICATE_KINDS:
        raise DataError(where, f"{name}: predicate_kind must be one of {', '.join(PREDICATE_KINDS)}, got "
                        f"{pair.predicate_kind!r}", row=pair.source_row)
    if pair.predicate_kind == NEUTRAL and not pair.frame:
        raise DataError(where, f"{name}: a neutral predicate needs its frame (the stereotypes of the same frame "
                        "are measured against it)", row=pair.source_row)
    if pair.phrase_end is not None:
        if isinstance(pair.phrase_end, bool) or not isinstance(pair.phrase_end, int) \
                or not 0 < pair.phrase_end <= len(pair.sent_more):
            raise DataError(where, f"{name}: phrase_end must be a character offset within sent_more (1 to "
                            f"{len(pair.sent_more)}), got {pair.phrase_end!r}", row=pair.source_row)


#: what the checksum covers: every field but the row a pair was read from
_CONTENT_FIELDS = tuple(f.name for f in fields(Pair) if f.name != "source_row")
#: fields added after checksums were first recorded: they enter a pair's record only where they differ from
#: their default, so every set without them keeps the checksum its earlier runs recorded
_ANNOTATIONS = {f.name: f.default for f in fields(Pair)
                if f.name in ("frame", "predicate_kind", "phrase_end", "other_groups")}


def content_checksum(pairs: list[Pair]) -> str:
    """sha256 over the pairs' canonical JSON: stable for generated sets and after parsing."""
    digest = hashlib.sha256()
    for pair in pairs:
        record = {name: getattr(pair, name) for name in _CONTENT_FIELDS  # asdict's, without its deep copy
                  if name not in _ANNOTATIONS or getattr(pair, name) != _ANNOTATIONS[name]}
        digest.update(json.dumps(record, ensure_ascii=False, sort_keys=True).encode("utf-8"))
        digest.update(b"\n")
    return "sha256:" + digest.hexdigest()
