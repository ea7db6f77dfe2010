"""Pair sets shipped as files inside the package: control and out-of-distribution sets.

The knowledge set and the neutral mentions are control sets for judging a mitigation
(issue 20, docs/scoring.md): definitional pairs whose correct sentence a model should keep
preferring, and neutral sentences that merely mention an identity. The OOD sets
(data/ood/) are stereotype pairs written independently of queerbias-de's templates, in
other German frames and inflections, with first names, and in French and Spanish. They are read with the ordinary pair reader (`pairs.io`, the
queerbias column layout), so a broken row is refused the usual way, naming file and row;
`split_keys` gives their columns to held-out splits (`NAME:test`, by `fact` by default).
"""

from __future__ import annotations

from collections import Counter
from functools import partial
from importlib import resources

from queerbias.pairs.io import read_pairs, row_columns
from queerbias.pairs.schema import PairSet

KNOWLEDGE = "queerbias-knowledge"
NEUTRAL_MENTIONS = "queerbias-de-neutral"
#: registered name -> (file in the package, what the set is for, recorded in every run's data reference)
FILES = {KNOWLEDGE: ("data/knowledge/knowledge.csv", "definitional"),
         NEUTRAL_MENTIONS: ("data/neutral_mentions/neutral_mentions.csv", "neutral-mentions"),
         "queerbias-de-ood-plural": ("data/ood/de_plural_frames.csv", "out-of-distribution"),
         "queerbias-de-ood-names": ("data/ood/de_names.csv", "out-of-distribution"),
         "queerbias-fr-ood": ("data/ood/fr.csv", "out-of-distribution"),
         "queerbias-es-ood": ("data/ood/es.csv", "out-of-distribution")}
#: the out-of-distribution sets: no training set the project generates shares a sentence with them
OUT_OF_DISTRIBUTION = tuple(name for name, (_, control) in FILES.items() if control == "out-of-distribution")


def shipped_pairs(name: str) -> PairSet:
    """The shipped set `name`, with its languages and its control kind in the meta."""
    path, control = FILES[name]
    with resources.as_file(resources.files("queerbias").joinpath(path)) as file:
        pair_set = read_pairs(file, name=name)
        languages = Counter(row.get("language", "") for row in row_columns(file).values())
    pair_set.meta |= {"control": control, "languages": dict(sorted(languages.items()))}
    if len(languages) == 1:
        pair_set.meta["language"] = next(iter(languages))
    return pair_set


def shipped_split_keys(name: str) -> dict[str, dict[str, str]]:
    """pair id -> the file's columns (fact, category, group, language, ...); the split's pair set
    is not needed, the shipped file always holds the same rows."""
    path, _ = FILES[name]
    with resources.as_file(resources.files("queerbias").joinpath(path)) as file:
        pairs = read_pairs(file, name=name).pairs
        columns = row_columns(file)
    return {pair.pair_id: {**columns[pair.source_row], "group": pair.group} for pair in pairs}


def knowledge_pairs() -> PairSet:
    return shipped_pairs(KNOWLEDGE)


def knowledge_split_keys(pair_set: PairSet | None = None) -> dict[str, dict[str, str]]:
    return shipped_split_keys(KNOWLEDGE)


def neutral_mention_pairs() -> PairSet:
    return shipped_pairs(NEUTRAL_MENTIONS)


def neutral_mention_split_keys(pair_set: PairSet | None = None) -> dict[str, dict[str, str]]:
    return shipped_split_keys(NEUTRAL_MENTIONS)


def _split_keys_of(name: str, pair_set: PairSet | None = None) -> dict[str, dict[str, str]]:
    return shipped_split_keys(name)


# The OOD sets' loaders and split keys, as the registry names them (it calls builtins
# without arguments).
OOD = ("queerbias-de-ood-plural", "queerbias-de-ood-names", "queerbias-fr-ood", "queerbias-es-ood")
ood_de_plural, ood_de_names, ood_fr, ood_es = (partial(shipped_pairs, name) for name in OOD)
ood_de_plural_keys, ood_de_names_keys, ood_fr_keys, ood_es_keys = (partial(_split_keys_of, name) for name in OOD)
