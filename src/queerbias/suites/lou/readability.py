"""Readability and length of a German text, the surface properties of Lou's Sec. 6 ii (Table 3).

The paper reports a "Flesch score (readability, Flesch (1948))" without its constants;
its texts are German, for which the usual form is Amstad's adaptation of the Flesch
Reading Ease (T. Amstad, *Wie verständlich sind unsere Zeitungen?*, Diss. Zürich 1978):

    FRE_de = 180 − ASL − 58.5 · ASW

ASL: words per sentence, ASW: syllables per word (Flesch 1948: 206.835 − 1.015 ASL −
84.6 ASW for English). No installed package provides it, so it is computed here:

- words: whitespace-separated tokens with at least one letter, counted without their
  non-letters, so a gender character does not split a word ("Politiker*innen",
  "Politiker:innen" and "Politiker_innen" are one word each, as "Politikerinnen");
- sentences: runs of text ended by ".", "!" or "?" (at least one per text);
- syllables: per word, the groups of consecutive vowels (a, e, i, o, u, ä, ö, ü, y), so
  diphthongs and double vowels ("ei", "au", "eu", "äu", "ie", "aa") count once; at least
  one per word. This is the common heuristic; it miscounts hiatus ("Ei-er", "Be-bau-ung"
  are one group short), the same way in an original and its reformulation.
"""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")
_VOWEL_GROUPS = re.compile(r"[aeiouäöüy]+")


def words(text: str) -> list[str]:
    """The words of `text`, each reduced to its letters (gender characters do not split words)."""
    return [word for word in ("".join(ch for ch in token if ch.isalpha()) for token in text.split()) if word]


def syllables(word: str) -> int:
    """Syllables of one German word: its vowel groups, at least one."""
    return max(1, len(_VOWEL_GROUPS.findall(word.lower())))


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
