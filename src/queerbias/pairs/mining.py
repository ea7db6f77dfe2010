"""Counterfactual pairs mined from real text: natural frames for the pair objectives.

Template pairs teach a mitigation the offset of the template's own frames. Every sentence
of real text that names an identity group, paired with its copy in which the CDA lexicon
(`text.counterfactual`) swapped the identity phrases for their counterfactuals, is a
minimal pair in a frame nobody wrote for a benchmark (Webster et al. 2020 swap whole
documents; here each sentence becomes a pair). A sentence is mined only when every phrase
it names could be swapped (a skipped phrase would leave the pair half-swapped), and each
distinct sentence once. Each sentence's language decides its lexicon (German or English,
`LEXICONS`); other languages are not mined.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from queerbias.pairs.schema import Pair, PairSet
from queerbias.text.counterfactual import Lexicon
from queerbias.text.language import detect_language

#: language -> packaged lexicon
LEXICONS = {"de": "data/cda/lexicon_de.yaml", "en": "data/cda/lexicon_en.yaml"}
#: a sentence ends at . ! ? followed by space and an upper-case letter, a digit or a quote
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"„“'(]?[A-ZÄÖÜ0-9])")
MIN_WORDS = 4


@dataclass
class Mined:
    """The mined pairs and what mining saw, per language and group."""

    pairs: list[Pair]
    sentences: Counter = field(default_factory=Counter)  # sentences read, by language
    pairs_per_group: Counter = field(default_factory=Counter)  # "de/gay" -> n
    skipped: Counter = field(default_factory=Counter)  # "de/gay" -> sentences left out

    def record(self) -> dict:
        return {"n_pairs": len(self.pairs), "sentences_read": dict(sorted(self.sentences.items())),
                "pairs_per_group": dict(sorted(self.pairs_per_group.items())),
                "skipped_per_group": dict(sorted(self.skipped.items()))}


def sentences(text: str) -> list[str]:
    """The sentences of a text (a simple splitter: enough for news and posts)."""
    return [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]


def load_lexicons(paths: dict[str, str] | None = None) -> dict[str, Lexicon]:
    """Each language's lexicon: a path given for it, else the packaged one."""
    return {language: Lexicon.load((paths or {}).get(language), packaged)
            for language, packaged in LEXICONS.items()}


def mine_pairs(texts: Iterable[str], lexicons: dict[str, Lexicon], name: str = "mined") -> Mined:
    """Every sentence naming an identity group, with its swapped copy, as a pair (original first)."""
    mined = Mined([])
    seen: set[str] = set()
    for text in texts:
        for sentence in sentences(text):
            if sentence in seen or len(sentence.split()) < MIN_WORDS:
                continue
            seen.add(sentence)
            language, _ = detect_language(sentence)
            lexicon = lexicons.get(language)
            if lexicon is None:
                continue
            mined.sentences[language] += 1
            groups = lexicon.mentioned(sentence)
            if not groups:
                continue
            swap, first = lexicon.swap(sentence), groups[0]
            if swap.skipped or swap.text == sentence:
                mined.skipped[f"{language}/{first}"] += 1
                continue
            digest = hashlib.sha256(sentence.encode("utf-8")).hexdigest()[:12]
            mined.pairs.append(Pair(f"{name}-{language}-{digest}", sentence, swap.text, first,
                                    category=f"mined-{language}"))
            mined.pairs_per_group[f"{language}/{first}"] += 1
    return mined


def mined_pair_set(mined: Mined, name: str, source: str) -> PairSet:
    return PairSet(name, mined.pairs, source, meta={"mined": mined.record()})
