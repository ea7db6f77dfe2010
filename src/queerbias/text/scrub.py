"""Remove what identifies or contacts a person from corpus text, and what hides from the eye.

Crawled posts and articles are GDPR Art. 9 data: a corpus must not carry a way to reach
or name their authors. Mentions (`@alice`, `@alice@chaos.social`), e-mail addresses,
bare fediverse handles (`alice@chaos.social`, which look exactly like e-mail addresses)
and phone numbers are replaced by placeholders, so the sentence stays readable for a
language model while the person does not.

Invisible characters (zero-width spaces and joiners, bidirectional controls, soft
hyphens, byte-order marks) are removed before anything is hashed: otherwise two copies
of one text differ by an invisible byte and exact deduplication misses them. A zero-width
joiner between two emoji is part of the emoji (🏳️‍🌈) and stays.
"""

from __future__ import annotations

import re
import unicodedata

MENTION, EMAIL, PHONE = "<user>", "<email>", "<phone>"

# Zero-width characters, bidi embeddings/overrides/isolates, word joiner and invisible
# operators, BOM, soft hyphen, Arabic letter mark, Mongolian vowel separator.
_INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b\u200c\u200e\u200f\u202a-\u202e"
                        "\u2060-\u2064\u2066-\u2069\ufeff]")
_ZWJ = "\u200d"
_EMOJI_BEFORE_JOINER = frozenset({"So", "Sk", "Mn"})  # a pictograph, skin tone or VS16 precedes

_HOST = r"[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}"
# An address `name@host.tld` (e-mail or bare handle); the name may hold dots, +, - and _.
_ADDRESS = re.compile(r"(?<![\w@.+\-])[\w.+\-]+@" + _HOST + r"(?![\w\-])")
# A mention `@name` or `@name@host`, not the middle of an address.
_MENTION = re.compile(r"(?<![\w@.+\-])@\w(?:[\w.\-]*\w)?(?:@" + _HOST + r")?(?![\w@])")
# Phone numbers: international (+49 / 0049 ...) or German national (0 + area code) with at
# least 7 further digits, separated by spaces, slashes or hyphens. Dots are not accepted as
# separators so that dates (01.05.2024), amounts and times never match.
_PHONE = re.compile(
    r"(?<![\w+/])(?:(?:\+|00)[1-9]\d{0,2}[ \-/]?(?:\(0\)[ \-/]?)?\(?\d{1,5}\)?"
    r"|\(0\d{1,5}\)|0\d{1,5})"
    r"(?:[ \-/]{0,3}\d){5,}(?![\w])")


def _keep_joiner(text: str, index: int) -> bool:
    before = text[index - 1] if index else ""
    after = text[index + 1] if index + 1 < len(text) else ""
    return (bool(before) and bool(after) and unicodedata.category(before) in _EMOJI_BEFORE_JOINER
            and unicodedata.category(after) == "So")


def remove_invisible(text: str) -> str:
    """`text` without zero-width, bidi and other invisible characters (emoji joiners kept)."""
    text = _INVISIBLE.sub("", text)
    if _ZWJ not in text:
        return text
    return "".join(ch for i, ch in enumerate(text) if ch != _ZWJ or _keep_joiner(text, i))


def scrub_personal_data(text: str) -> str:
    """`text` with invisible characters removed and mentions, addresses and phone numbers replaced."""
    text = remove_invisible(text)
    text = _ADDRESS.sub(EMAIL, text)
    text = _MENTION.sub(MENTION, text)
    return _PHONE.sub(PHONE, text)
