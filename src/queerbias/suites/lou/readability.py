"""Readability and length of a German text, the surface properties of Lou's Sec. 6 ii (Table 3) and
App. A.4 (Table 5).

Length is counted in whitespace-separated words (`word_count`): Table 5's "average number of
tokens" for GermEval-Engaging, 30.6 ± 41.6 over its 2,276 texts, is 30.55 ± 41.61 in whitespace
words and 29.6 ± 39.5 in words with a letter (below); subword tokens give about twice as many
(62.5 ± 68.1 over its 200 test texts), so the paper's unit is the whitespace word.

The paper reports a "Flesch score (readability, Flesch (1948))" without its constants;
its texts are German, for which the usual form is Amstad's adaptation of the Flesch
Reading Ease (T. Amstad, *Wie verständlich sind unsere Zeitungen?*, Diss. Zürich 1978):

    FRE_de = 180 − ASL − 58.5 · ASW

ASL: words per sentence, ASW: syllables per word (Flesch 1948: 206.835 − 1.015 ASL −
84.6 ASW for English). It is computed here:

- words: whitespace-separated tokens with at least one letter, counted without their
  non-letters, so a gender character does not split a word ("Politiker*innen",
  "Politiker:innen" and "Politiker_innen" are one word each, as "Politikerinnen");
- sentences: runs of text ended by ".", "!" or "?" (at least one per text);
- syllables: per word, the syllable nuclei of each part the German hyphenation dictionary
  (pyphen's de_DE, the Hunspell patterns textstat uses) cuts it into: a part's vowels
  (a, e, i, o, u, ä, ö, ü, y) read left to right, a diphthong or long vowel ("ai", "au",
  "äu", "ei", "eu", "ey", "ay", "ie", "aa", "ee", "oo", and the "ou" of loans: "Tour",
  "Jour-nal", "Bou-tique") as one nucleus, the "u" of "qu" as part of the consonant
  ("Quel-le", "be-quem"), any other vowel as its own; at least one per word. The
  dictionary separates hiatus its patterns know ("Me-di-en", "Fa-mi-li-en", "The-a-ter",
  "Na-ti-on"); the nuclei separate the rest ("Si-tu-a-ti-on", "Ei-er", "Be-bau-ung",
  "I-dee"). What remains wrong is what the spelling does not show: the word-final "-ie" of
  Latin loans read as a long i ("Fa-mi-lie": 3, not 4; "Li-nie", "Se-rie"), hiatus inside a
  part the patterns keep whole ("Zoo-lo-gie": 3, not 4), and the silent final e of English
  and French loans ("on-line": 3, not 2; "Bou-tique": 3, not 2); docs/lou.md measures them.
"""

from __future__ import annotations

import re
from functools import cache

import pyphen

_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")
_VOWELS = frozenset("aeiouäöüy")
#: two vowels that make one syllable nucleus in German (diphthongs, long vowels)
NUCLEI = frozenset({"ai", "au", "äu", "ei", "eu", "ey", "ay", "ie", "aa", "ee", "oo", "ou"})


def word_count(text: str) -> int:
    """The length of `text` in words as Table 5 counts them: whitespace-separated tokens."""
    return len(text.split())


def words(text: str) -> list[str]:
    """The words of `text`, each reduced to its letters (gender characters do not split words)."""
    return [word for word in ("".join(ch for ch in token if ch.isalpha()) for token in text.split()) if word]


def syllables(word: str) -> int:
    """Syllables of one German word: the nuclei of its hyphenation parts (module docstring), at least one."""
    return max(1, sum(_nuclei(part) for part in _hyphenation().inserted(word.lower()).split("-")))


def _nuclei(part: str) -> int:
    """Syllable nuclei of a part of a word: vowels left to right, a pair of `NUCLEI` counting once, the
    "u" after "q" none."""
    count, i = 0, 0
    while i < len(part):
        if part[i] in _VOWELS and not (part[i] == "u" and part[i - 1:i] == "q"):
            count += 1
            i += 2 if part[i:i + 2] in NUCLEI else 1
        else:
            i += 1
    return count


@cache
def _hyphenation() -> pyphen.Pyphen:
    return pyphen.Pyphen(lang="de_DE")


def sentence_count(text: str) -> int:
    """Sentences ended by ., ! or ?, plus a trailing one without; at least one."""
    ends = len(_SENTENCE_END.findall(text))
    tail = _SENTENCE_END.split(text)[-1]
    return max(1, ends + (1 if words(tail) else 0))


def flesch_amstad(text: str) -> float | None:
    """Amstad's German Flesch Reading Ease of `text`; None for a text without words."""
    found = words(text)
    if not found:
        return None
    asl = len(found) / sentence_count(text)
    asw = sum(syllables(w) for w in found) / len(found)
    return 180.0 - asl - 58.5 * asw
