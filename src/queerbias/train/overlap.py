"""The overlap guard: a model judged on what it trained on proves nothing.

Before any model loads, the texts of every benchmark's items (`Suite.texts`: the pair
suite's sentences, GRUFF's, Lou's, GIFI-DE's prompts) are compared with what the run trains on: the training pairs'
sentences (`pairs.train`) and the corpus as trained (after targeting and augmentation),
cut into sentences, and each document whole. Texts are compared with runs of whitespace
collapsed and, when the tokenizer lower-cases (uncased BERT), case-folded, as the model
sees them. A shared text refuses the run; `pairs.allow_overlap` and `data.allow_overlap`
override it, and the override with the number of shared texts per benchmark is recorded
in every summary the run writes (`held_out`, `corpus_overlap`). A suite whose items have no
such texts says why (`Declaration.no_texts_reason`); it is not checked, and the record says
so by leaving it out.

Sets made for judging (a registered set's declared validation and test parts:
queerbias-de-shapes' frames) are checked whether or not the run evaluates them, and no
override admits them: a run that trained on them could no longer be judged on frames it
never saw.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from queerbias.errors import QueerbiasError
from queerbias.pairs.registry import list_benchmarks
from queerbias.pairs.resolve import sealed_pairs
from queerbias.pairs.schema import PairSet
from queerbias.suites.registry import get_suite

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


def check_overlap(config, data: dict[str, tuple], pairs: PairSet | None, corpus: list[str] | None,
                  lowercase: bool) -> dict:
    """Refuse benchmarks sharing texts with the training pairs or corpus, unless allowed; returns
    what the run records about it (`held_out` with training pairs, `corpus_overlap` with a corpus)."""
    evaluated = {name: {_key(text, lowercase) for text in texts} for name, texts in _evaluation_texts(config, data)}
    sealed = _sealed_texts(lowercase)
    record = {}
    if pairs is not None:
        trained = {_key(s, lowercase) for p in pairs.pairs for s in (p.sent_more, p.sent_less)}
        what = f"the training pairs {pairs.name!r} (config key 'pairs.train')"
        _refuse_sealed(sealed, trained, what)
        shared = _refuse(evaluated, trained, config.pairs.allow_overlap, what, "pairs.allow_overlap")
        record["held_out"] = {"train_pairs": pairs.name, "train_checksum": pairs.checksum, "n_train_pairs": len(pairs),
                              "allow_overlap": config.pairs.allow_overlap, "shared_sentences": shared}
    if corpus is not None:
        trained = {_key(part, lowercase) for text in corpus for part in (text, *_SENTENCE_END.split(text))}
        what = f"the training corpus {config.data.train!r} (config key 'data.train')"
        _refuse_sealed(sealed, trained, what)
        if evaluated:
            shared = _refuse(evaluated, trained, config.data.allow_overlap, what, "data.allow_overlap")
            record["corpus_overlap"] = {"allow_overlap": config.data.allow_overlap, "shared_sentences": shared}
    return record


def _sealed_texts(lowercase: bool) -> dict[str, frozenset[str]]:
    """Per set made for judging, its texts as compared (`sealed_pairs`). Builtin sets are generated from
    the package's files and the same on every call, so their texts are collected once per process and set of
    registrations (about 2 s of validation and hashing a training run no longer repeats in one process)."""
    declared = tuple((info.name, info.builtin, info.split_keys, info.parts) for info in list_benchmarks() if info.parts)
    if all(builtin for _, builtin, _, _ in declared):
        return _builtin_sealed_texts(lowercase, declared)
    return _collect_sealed_texts(lowercase)


@cache
def _builtin_sealed_texts(lowercase: bool, declared: tuple) -> dict[str, frozenset[str]]:
    return _collect_sealed_texts(lowercase)


def _collect_sealed_texts(lowercase: bool) -> dict[str, frozenset[str]]:
    return {name: frozenset(_key(s, lowercase) for p in found.pairs for s in (p.sent_more, p.sent_less))
            for name, found in sealed_pairs().items()}


def _evaluation_texts(config, data: dict[str, tuple]) -> Iterable[tuple[str, list[str]]]:
    """(benchmark folder, the texts of its items) for every benchmark whose suite names texts."""
    for bench, name in zip(config.eval.benchmarks, config.benchmark_dirs(), strict=True):
        texts = list(get_suite(bench.suite).texts(data[name][0]))
        if texts:
            yield name, texts


def _refuse(evaluated: dict[str, set[str]], trained: set[str], allowed: bool, what: str, key: str) -> dict[str, int]:
    """Shared texts per benchmark; refused (naming the first benchmark and an example) unless allowed."""
    shared = {name: texts & trained for name, texts in evaluated.items()}
    overlapping = {name: found for name, found in shared.items() if found}
    if overlapping and not allowed:
        name, found = next(iter(overlapping.items()))
        raise QueerbiasError(f"the evaluation items of benchmark {name!r} share {len(found)} sentences with {what}, "
                             f"e.g. {min(found)!r}; evaluate on held-out data (e.g. queerbias-de:test) or set "
                             f"{key}: true")
    return {name: len(found) for name, found in shared.items()}


def _refuse_sealed(sealed: dict[str, set[str]], trained: set[str], what: str) -> None:
    """Refuse training data holding a sentence of a set made for judging (no override)."""
    for name, texts in sealed.items():
        found = texts & trained
        if found:
            raise QueerbiasError(f"{what} share {len(found)} sentences with {name}, e.g. {min(found)!r}: its "
                                 "validation and test frames judge a run on frames it never saw, so no run may "
                                 "train on them (no override)")


def _key(text: str, lowercase: bool) -> str:
    text = " ".join(text.split())
    return text.casefold() if lowercase else text
