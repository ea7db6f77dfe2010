"""The numeric answer in a German solution text, for Performance Equality.

As the GIFI reference: the number after the answer phrase if the model wrote one,
else the last number in the text. German number format: "1.250" is one thousand two
hundred fifty, "3,5" is three and a half.
"""

from __future__ import annotations

import re

_NUMBER = r"-?\d{1,3}(?:\.\d{3})+(?:,\d+)?|-?\d+(?:,\d+)?"
_PHRASE = re.compile(r"(?:die\s+)?(?:antwort|lösung|ergebnis)\s+(?:ist|lautet)\s*:?\s*(?:=\s*)?"
                     rf"({_NUMBER})", re.IGNORECASE)
_ANY = re.compile(rf"(?<![\d.,])({_NUMBER})(?![\d])")


def parse_number(text: str) -> float:
    return float(text.replace(".", "").replace(",", "."))


def extract_answer(text: str) -> float | None:
    """The stated answer, else the last number; None if the text holds no number."""
    match = _PHRASE.search(text)
    if match:
        return parse_number(match.group(1))
    numbers = _ANY.findall(text)
    return parse_number(numbers[-1]) if numbers else None
