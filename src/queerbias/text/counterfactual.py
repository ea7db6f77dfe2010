"""German counterfactual swaps of identity phrases, for CDA (Webster et al. 2020).

The lexicon (data, `queerbias/data/cda/lexicon_de.yaml`) maps each identity phrase of a
taxonomy group to a counterfactual: schwule -> heterosexuelle, trans Frau -> cis Frau,
Lesbe/Lesben -> heterosexuelle Frau/Frauen, nichtbinäre -> cis. German needs more than a
word list: an adjective's ending depends on the determiner (strong, weak or mixed
declension), case, gender and number, so a swap that has to create an ending (an
uninflected word replaced by an inflected one, a noun by adjective + noun) reads them
from the words before the phrase and from the noun after it. Where that is not possible
(an unknown noun, a determiner that does not fit), the phrase is left alone and counted
as skipped rather than guessed.

Matches are whole words: "Transport", "Interesse" and "Queerness" are not identity terms.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from queerbias.errors import QueerbiasError
from queerbias.fileio import read_text_utf8
from queerbias.text.taxonomy import GROUPS
from queerbias.yamlio import load_yaml

LEXICON = "data/cda/lexicon_de.yaml"
ENDINGS = ("e", "en", "er", "es", "em")
KINDS = ("adjective", "invariant", "noun", "prefix")
GENDERS = ("m", "f", "n", "pl")

# Adjective endings by declension, gender/number and case (Duden grammar tables).
_WEAK = {"m": ("e", "en", "en", "en"), "f": ("e", "e", "en", "en"),
         "n": ("e", "e", "en", "en"), "pl": ("en", "en", "en", "en")}
_MIXED = {"m": ("er", "en", "en", "en"), "f": ("e", "e", "en", "en"),
          "n": ("es", "es", "en", "en"), "pl": ("en", "en", "en", "en")}
_STRONG = {"m": ("er", "en", "em", "en"), "f": ("e", "e", "er", "er"),
           "n": ("es", "es", "em", "en"), "pl": ("e", "e", "en", "er")}
_CASES = ("nom", "acc", "dat", "gen")
_DECLENSION = {"weak": _WEAK, "mixed": _MIXED, "strong": _STRONG}

# What a determiner's ending says about gender/number and case, in order of preference.
_DER_ENDING = {
    "er": [("m", "nom"), ("f", "dat"), ("f", "gen"), ("pl", "gen")],
    "e": [("f", "nom"), ("f", "acc"), ("pl", "nom"), ("pl", "acc")],
    "as": [("n", "nom"), ("n", "acc")],
    "es": [("n", "nom"), ("n", "acc"), ("m", "gen"), ("n", "gen")],
    "des": [("m", "gen"), ("n", "gen")],
    "en": [("m", "acc"), ("pl", "dat")],
    "em": [("m", "dat"), ("n", "dat")],
}
_EIN_ENDING = {
    "": [("m", "nom"), ("n", "nom"), ("n", "acc")],
    "e": [("f", "nom"), ("f", "acc"), ("pl", "nom"), ("pl", "acc")],
    "en": [("m", "acc"), ("pl", "dat")],
    "em": [("m", "dat"), ("n", "dat")],
    "er": [("f", "dat"), ("f", "gen"), ("pl", "gen")],
    "es": [("m", "gen"), ("n", "gen")],
}
_ARTICLES = {"der": "er", "die": "e", "das": "as", "des": "des", "den": "en", "dem": "em"}
_CONTRACTIONS = {"zum": "em", "im": "em", "am": "em", "vom": "em", "beim": "em", "zur": "er",
                 "ins": "as", "ans": "as", "aufs": "as"}
_DER_STEMS = ("dies", "jen", "jed", "welch", "all", "manch", "solch", "beid")
_EIN_STEMS = ("ein", "kein", "mein", "dein", "sein", "ihr", "unser", "euer", "eur")
_QUANTIFIER_STEMS = ("viel", "einig", "mehrer", "wenig", "zahlreich", "ander", "verschieden")
_NUMERALS = {"zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun", "zehn", "zwölf",
             "hundert", "tausend"}
_PREPOSITIONS = {
    **dict.fromkeys(("mit", "von", "zu", "bei", "aus", "nach", "seit", "gegenüber", "außer", "samt",
                     "ab", "in", "an", "auf", "unter", "über", "vor", "hinter", "neben", "zwischen"),
                    "dat"),
    **dict.fromkeys(("für", "gegen", "ohne", "um", "durch", "bis"), "acc"),
    **dict.fromkeys(("wegen", "trotz", "während", "statt", "anstatt"), "gen"),
}
_CLAUSE_BREAK = re.compile(r"[.!?;:,\n()\"„“”]")


def _determiner(word: str) -> tuple[str, str] | None:
    """(declension, ending key) of a determiner, None for any other word."""
    if word in _ARTICLES:
        return "weak", _ARTICLES[word]
    if word in _CONTRACTIONS:
        return "weak", _CONTRACTIONS[word]
    for stem in _DER_STEMS:
        if word.startswith(stem) and word[len(stem):] in ("e", "er", "es", "en", "em"):
            return "weak", word[len(stem):]
    for stem in _EIN_STEMS:
        if word.startswith(stem) and word[len(stem):] in _EIN_ENDING:
            return "mixed", word[len(stem):]
    return None


def attributive_ending(previous: list[str], genders: tuple[str, ...]) -> str | None:
    """The ending of an attributive adjective before a noun of one of `genders` (m, f, n, pl),
    given the words before it (nearest first, lower case, this clause only).

    A determiner right before (or before one inflected adjective) decides weak or mixed
    declension and the case; without one the declension is strong and the case comes from
    a quantifier's ending or a preposition (nominative otherwise). None when no reading fits.
    """
    det = None
    if previous and _determiner(previous[0]):
        det = _determiner(previous[0])
    elif len(previous) > 1 and previous[0].endswith(ENDINGS) and _determiner(previous[1]):
        det = _determiner(previous[1])
    if det is not None:
        declension, key = det
        options = (_DER_ENDING if declension == "weak" else _EIN_ENDING)[key]
        for gender in genders:
            for found, case in options:
                if found == gender:
                    return _DECLENSION[declension][gender][_CASES.index(case)]
        return None
    case = "nom"
    for word in previous[:2]:
        stem = next((s for s in _QUANTIFIER_STEMS if word.startswith(s)), None)
        if stem is not None:
            case = {"e": "nom", "en": "dat", "er": "gen"}.get(word[len(stem):], "nom")
            break
        if word in _PREPOSITIONS:
            case = _PREPOSITIONS[word]
            break
        if word not in _NUMERALS:
            break
    return _STRONG[genders[0]][_CASES.index(case)]


@dataclass(frozen=True)
class Form:
    """One side of a lexicon entry (see the lexicon file's header)."""

    kind: str
    words: tuple[str, ...]  # adjective: spellings; invariant/prefix: (word,); noun: (sg, pl)
    adjective: str | None = None  # noun phrases: the adjective before the noun
    gender: str | None = None  # nouns
    stems: tuple[str, ...] = ()  # prefixes

    @property
    def word(self) -> str:
        return self.words[0]

    def pattern(self) -> re.Pattern:
        """Whole-word regex; groups: word (+ ending, star), noun, hyphen/stem."""
        def alternatives(words) -> str:
            return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))

        tail = r"(?!\w)(?!-\w)"
        if self.kind == "adjective":
            body = rf"(?P<word>{alternatives(self.words)})(?P<ending>{alternatives(ENDINGS)})?(?P<star>\*)?"
        elif self.kind == "invariant":
            body = rf"(?P<word>{alternatives(self.words)})(?P<star>\*)?"
        elif self.kind == "noun":
            adjective = (rf"(?P<word>(?i:{re.escape(self.adjective)}))(?P<ending>{alternatives(ENDINGS)})?\s+"
                         if self.adjective else "")
            return re.compile(rf"(?<!\w){adjective}(?P<noun>{alternatives(self.words)}){tail}")
        else:
            body = rf"(?P<word>{alternatives(self.words)})(?P<hyphen>-?)(?P<stem>{alternatives(self.stems)})"
        return re.compile(rf"(?<!\w){body}{tail}", re.IGNORECASE)


@dataclass(frozen=True)
class Entry:
    group: str
    source: Form
    target: Form
    by_noun: dict = field(default_factory=dict, hash=False)

    def inverse(self) -> Entry:
        return Entry(self.group, self.target, self.source, self.by_noun)


@dataclass
class Swap:
    """A swapped text with per-group counts of swapped and skipped phrases."""

    text: str
    swapped: Counter = field(default_factory=Counter)
    skipped: Counter = field(default_factory=Counter)


class Lexicon:
    def __init__(self, entries: list[Entry], nouns: dict[str, tuple[str, ...]], version, checksum: str):
        self.entries, self.nouns, self.version, self.checksum = entries, nouns, version, checksum
        self._patterns = [(entry, entry.source.pattern()) for entry in entries]

    @classmethod
    def load(cls, path: str | Path | None = None, packaged: str = LEXICON) -> Lexicon:
        """Parse a lexicon file (default: the packaged one, German unless `packaged` names
        another); errors name the entry."""
        if path is None:
            where, text = packaged, resources.files("queerbias").joinpath(packaged).read_text(encoding="utf-8")
        else:
            where, text = str(path), read_text_utf8(path, "CDA lexicon (config key 'cda.lexicon')")
        raw = load_yaml(where, text)  # unique keys; errors name the file and line
        if not isinstance(raw, dict) or not isinstance(raw.get("entries"), list):
            raise QueerbiasError(f"{where}: a lexicon needs a list under 'entries'")
        nouns = {}
        for noun, genders in (raw.get("nouns") or {}).items():
            genders = tuple(genders) if isinstance(genders, list) else (genders,)
            if not genders or any(g not in GENDERS for g in genders):
                raise QueerbiasError(f"{where}: noun {noun!r} needs a gender among {GENDERS}")
            nouns[noun] = genders
        entries = [_parse_entry(where, i, item) for i, item in enumerate(raw["entries"], start=1)]
        return cls(entries, nouns, raw.get("version"), "sha256:" + hashlib.sha256(text.encode()).hexdigest())

    def inverse(self) -> Lexicon:
        """Every entry the other way round (counterfactual -> identity phrase)."""
        return Lexicon([e.inverse() for e in self.entries], self.nouns, self.version, self.checksum)

    def restricted(self, groups: set[str]) -> Lexicon:
        return Lexicon([e for e in self.entries if e.group in groups], self.nouns, self.version,
                       self.checksum)

    def matches(self, text: str) -> list[tuple[Entry, re.Match]]:
        """Non-overlapping matches, leftmost first, the longest where two start together."""
        found = sorted(((m.start(), -m.end(), i, entry, m)
                        for i, (entry, pattern) in enumerate(self._patterns)
                        for m in pattern.finditer(text)), key=lambda item: item[:3])
        chosen, end = [], 0
        for start, negative_end, _, entry, match in found:
            if start >= end:
                chosen.append((entry, match))
                end = -negative_end
        return chosen

    def mentions(self, text: str) -> set[str]:
        """The groups whose identity phrases occur in `text`."""
        return set(self.mentioned(text))

    def mentioned(self, text: str) -> list[str]:
        """The group of each identity phrase in `text`, leftmost first."""
        return [self._group(entry, match, text) for entry, match in self.matches(text)]

    def swap(self, text: str) -> Swap:
        """Replace every identity phrase by its counterfactual."""
        result, pieces, last = Swap(text), [], 0
        for entry, match in self.matches(text):
            group = self._group(entry, match, text)
            replacement = self._replacement(entry, match, text)
            if replacement is None:
                result.skipped[group] += 1
                continue
            pieces += [text[last:match.start()], replacement]
            last = match.end()
            result.swapped[group] += 1
        result.text = "".join(pieces) + text[last:]
        return result

    def _group(self, entry: Entry, match: re.Match, text: str) -> str:
        return entry.by_noun.get(_next_word(text, match.end()), entry.group)

    def _replacement(self, entry: Entry, match: re.Match, text: str) -> str | None:
        source, target = entry.source, entry.target
        previous = _words_before(text, match.start())
        if source.kind == "prefix":
            return _case_like(match["word"], target.word) + match["hyphen"] + match["stem"]
        if source.kind == "noun":
            plural = match["noun"].casefold() == source.words[1].casefold()
            noun = target.words[1 if plural else 0]
            if not target.adjective:
                return noun
            ending = attributive_ending(previous, ("pl",) if plural else (target.gender,))
            adjective = target.adjective + ending
            return f"{adjective[:1].upper() + adjective[1:] if _sentence_initial(text, match.start()) else adjective} {noun}"
        following = _next_word(text, match.end())
        attributive = following is not None and following[:1].isupper()
        ending = match.groupdict().get("ending") or ""
        if target.kind == "invariant":
            if ending and not attributive:
                return None  # a nominalised adjective ("Nichtbinäre") has no uninflected twin
            return _case_like(match["word"], target.word)
        if source.kind == "invariant" and attributive:
            if following not in self.nouns:
                return None
            ending = attributive_ending(previous, self.nouns[following])
            if ending is None:
                return None
        return _case_like(match["word"], target.word + ending)


def _parse_entry(where: str, number: int, item) -> Entry:
    def fail(message: str):
        raise QueerbiasError(f"{where}: entry {number} ({item!r}): {message}")

    if not isinstance(item, dict) or not {"group", "from", "to"} <= set(item):
        fail("needs group, from and to")
    if item["group"] not in GROUPS:
        fail(f"unknown group {item['group']!r}")
    source, target = (_parse_form(fail, item[side], side) for side in ("from", "to"))
    compatible = {"adjective", "invariant"}
    if not ({source.kind, target.kind} <= compatible or source.kind == target.kind):
        fail(f"cannot map a {source.kind} to a {target.kind}")
    if source.kind == "prefix":
        target = Form("prefix", target.words, stems=source.stems)
    by_noun = item.get("by_noun") or {}
    if any(g not in GROUPS for g in by_noun.values()):
        fail("by_noun names an unknown group")
    return Entry(item["group"], source, target, dict(by_noun))


def _parse_form(fail, spec, side: str) -> Form:
    if not isinstance(spec, dict):
        fail(f"'{side}' must be a mapping")
    kinds = ["noun"] if "noun" in spec else [k for k in KINDS if k in spec]
    if len(kinds) != 1:
        fail(f"'{side}' needs exactly one of {', '.join(KINDS)}")
    kind = kinds[0]
    value = spec[kind]
    if kind == "noun":
        if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) and v for v in value)):
            fail(f"'{side}.noun' must be [singular, plural]")
        if spec.get("gender") not in ("m", "f", "n"):
            fail(f"'{side}.gender' must be m, f or n")
        return Form("noun", tuple(value), adjective=spec.get("adjective"), gender=spec["gender"])
    if not isinstance(value, str) or not value.strip() or (kind != "adjective" and " " in value):
        fail(f"'{side}.{kind}' must be one word")
    spellings = tuple(spec.get("spellings") or ())
    stems = tuple(spec.get("stems") or ())
    if kind == "prefix" and side == "from" and not stems:
        fail(f"'{side}.stems' must list the second parts of the compounds")
    return Form(kind, (value, *spellings), stems=stems)


def _case_like(source: str, word: str) -> str:
    """`word` with the first letter in the case of the source's first letter."""
    return (word[:1].upper() if source[:1].isupper() else word[:1].lower()) + word[1:]


def _words_before(text: str, start: int, n: int = 3) -> list[str]:
    """The last words of the clause before `start`, nearest first, lower case."""
    clause = _CLAUSE_BREAK.split(text[max(0, start - 120):start])[-1]
    return [w.lower() for w in reversed(re.findall(r"\w+", clause))][:n]


def _next_word(text: str, end: int) -> str | None:
    following = re.match(r"[ \t]+(\w+)", text[end:])
    return following.group(1) if following else None


def _sentence_initial(text: str, start: int) -> bool:
    before = text[:start].rstrip(" \t\"„“'(")
    return not before or before[-1] in ".!?:\n"
