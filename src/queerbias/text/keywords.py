"""Find the seed study's LGBTQ+ keywords in German text, and the hashtags that carry them.

Plain substring search is wrong for German: "Trans" is inside "Transport", "Inter"
inside "Internet". Each keyword therefore becomes a regular expression anchored on
word boundaries that still admits German inflections ("queere", "schwulen",
"lesbischer"), gender-star forms ("trans*", "inter*") and the spellings people use
for multi-word terms ("Trans Mann", "trans-Mann", "Transmann").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

DEFAULT_KEYWORDS: tuple[str, ...] = (
    "LGBTQ", "Queer", "Trans", "Trans Mann", "Trans Frau", "Nicht-binär", "Genderqueer",
    "Genderfluid", "Bisexuell", "Pansexuell", "Lesbisch", "Asexuell", "Schwul",
    "Demisexuell", "Agender", "Polyamor", "Inter",
)

# German adjective/noun endings (queer-e, schwul-en, lesbisch-er, Queer-s, ...).
_ENDINGS = r"(?:e|en|er|es|em|n|s)?"
# A match ends at a word boundary or at a gender-inclusive marker: trans*, inter*Personen, queer_.
_TAIL = r"(?:[*_:]|(?!\w))"

# Hand-written stems for keywords whose German usage a generic rule gets wrong.
# "Trans" and "Inter" take no endings ("intern", "Transe" are other words).
_SPECIAL: dict[str, str] = {
    "lgbtq": r"l[gs]bt[qia2s]{0,6}\+?",
    "trans": r"trans(?:(?:gender|ident|sexuell|geschlechtlich)" + _ENDINGS + ")?",
    "trans mann": r"trans[\s\-*_:]?m(?:ann|änner)" + _ENDINGS,
    "trans frau": r"trans[\s\-*_:]?frau" + _ENDINGS,
    "nicht-binär": r"(?:nicht|non)[\s\-]?bin(?:är|aer|ary)" + _ENDINGS,
    "lesbisch": r"lesb(?:isch|e)" + _ENDINGS,
    "polyamor": r"polyam(?:or|orie|ourös|orös)" + _ENDINGS,
    "inter": r"inter(?:(?:geschlechtlich|sexuell)" + _ENDINGS + ")?",
}

# Hashtag variants beyond the mechanical spelling (people tag #nonbinary, #lgbt, ...).
_TAG_VARIANTS: dict[str, tuple[str, ...]] = {
    "lgbtq": ("lgbt", "lgbtq", "lgbtqia", "lgbtiq", "lsbtiq", "lsbti"),
    "trans": ("trans", "transgender"),
    "nicht-binär": ("nonbinary", "enby"),
    "lesbisch": ("lesbe", "lesben"),
    "schwul": ("schwule",),
    "inter": ("intergeschlechtlich", "intersex"),
    "polyamor": ("polyamorie", "polyamory"),
}


def _fold(keyword: str) -> str:
    return unicodedata.normalize("NFC", keyword).strip().casefold()


def _generic_pattern(folded: str) -> str:
    """Stem plus German endings; spaces and hyphens may be written, dropped or swapped."""
    parts = [re.escape(p) for p in re.split(r"[\s\-]+", folded) if p]
    return r"[\s\-]?".join(parts) + _ENDINGS


def keyword_to_tags(keyword: str) -> list[str]:
    """Mastodon hashtags for a keyword, lower case and without '#'.

    Tags cannot hold spaces or hyphens, so "Trans Mann" becomes "transmann" and
    "Nicht-binär" becomes "nichtbinär" (plus the ASCII spelling "nichtbinaer").
    """
    base = re.sub(r"[\s\-]+", "", _fold(keyword))
    tags = [base]
    ascii_spelling = base.replace("ä", "ae").replace("ö", "oe").replace("ü", "ue").replace("ß", "ss")
    tags.append(ascii_spelling)
    tags.extend(_TAG_VARIANTS.get(_fold(keyword), ()))
    return list(dict.fromkeys(tags))


class KeywordMatcher:
    """Match a fixed keyword list against text; `find` names the canonical keywords found."""

    def __init__(self, keywords: Iterable[str] = DEFAULT_KEYWORDS):
        self.keywords = tuple(dict.fromkeys(k.strip() for k in keywords if k.strip()))
        if not self.keywords:
            raise ValueError("KeywordMatcher needs at least one keyword")
        self._patterns = [
            (keyword, re.compile(r"(?<!\w)" + _SPECIAL.get(_fold(keyword), _generic_pattern(_fold(keyword))) + _TAIL,
                                 re.IGNORECASE))
            for keyword in self.keywords
        ]

    def find(self, text: str) -> list[str]:
        """Canonical keywords that occur in `text`, in the order they were given."""
        text = unicodedata.normalize("NFC", text)
        return [keyword for keyword, pattern in self._patterns if pattern.search(text)]
