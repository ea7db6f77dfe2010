"""Remove what identifies or contacts a person from corpus text, and what hides from the eye.

Crawled posts and articles are GDPR Art. 9 data: a corpus must not carry a way to reach
or name their authors. Mentions (`@alice`, `@alice@chaos.social`), e-mail addresses,
bare fediverse handles (`alice@chaos.social`, which look exactly like e-mail addresses),
phone numbers and, where the caller knows them, people's display names are replaced by
placeholders, so the sentence stays readable for a language model while the person does not.

People who do not want to be found by a scraper write their contacts so that one misses
them, and those spellings count too: a leading `.@user`, the fullwidth `＠`, hosts on
internationalised domain names (`bücher.de`, `xn--bcher-kva.de`), `name(at)host.de` and
`name [at] host [dot] de`, and phone numbers separated by dots (`+49.170.…`, international
form only, so that dates never match) or by thin and narrow no-break spaces.

Invisible characters (zero-width spaces and joiners, bidirectional controls, soft
hyphens, byte-order marks) are removed before anything is hashed: otherwise two copies
of one text differ by an invisible byte and exact deduplication misses them. A zero-width
joiner between two emoji is part of the emoji (🏳️‍🌈) and stays.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

MENTION, EMAIL, PHONE, NAME = "<user>", "<email>", "<phone>", "<name>"

# Zero-width characters, bidi embeddings/overrides/isolates, word joiner and invisible
# operators, BOM, soft hyphen, Arabic letter mark, Mongolian vowel separator.
_INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b\u200c\u200e\u200f\u202a-\u202e"
                        "\u2060-\u2064\u2066-\u2069\ufeff]")
_ZWJ = "\u200d"
_EMOJI_BEFORE_JOINER = frozenset({"So", "Sk", "Mn"})  # a pictograph, skin tone or VS16 precedes

_AT = "[@\uff20\ufe6b]"              # @, fullwidth ＠, small ﹫
_DOT = "[.\uff0e\u3002\uff61]"       # the dots IDNA accepts between labels
_BRACKETED = r"\s*[(\[{<]\s*(?:WORD)\s*[)\]}>]\s*"
_OBFUSCATED_AT = _BRACKETED.replace("WORD", r"at|ät|@|\uff20")
_OBFUSCATED_DOT = _BRACKETED.replace("WORD", r"dot|punkt|\.")
_LABEL = r"[^\W_](?:[\w\-]*[^\W_])?"  # a host label in any script
_TLD = r"(?:xn--[a-z0-9\-]+|[^\W\d_]{2,})"
_HOST = f"{_LABEL}(?:{_DOT}{_LABEL})*{_DOT}{_TLD}"
_OBFUSCATED_HOST = f"{_LABEL}(?:(?:{_DOT}|{_OBFUSCATED_DOT}){_LABEL})*(?:{_DOT}|{_OBFUSCATED_DOT}){_TLD}"
_LOCAL_PART = r"(?<![\w@\uff20.+\-])[\w.+\-]+"
# An address `name@host.tld` (e-mail or bare handle), and its spellings with `(at)` and `[dot]`.
_ADDRESS = re.compile(f"{_LOCAL_PART}{_AT}{_HOST}(?![\\w\\-])")
_OBFUSCATED_ADDRESS = re.compile(f"{_LOCAL_PART}{_OBFUSCATED_AT}{_OBFUSCATED_HOST}(?![\\w\\-])", re.IGNORECASE)
# A mention `@name` or `@name@host` (also `.@name`), not the middle of an address.
_MENTION = re.compile(f"(?<![\\w@\\uff20+\\-]){_AT}\\w(?:[\\w.\\-]*\\w)?(?:{_AT}{_HOST})?(?![\\w@\\uff20])")
# Phone numbers: international (+49 / 0049 ...) or German national (0 + area code) with at
# least 7 further digits, separated by spaces (thin and narrow no-break ones too), slashes or
# hyphens. Dots separate only numbers in international form, so that dates (01.05.2024),
# amounts and times never match.
_SPACES = "\u00a0\u2007\u2009\u202f"
_HYPHENS = "\u2010\u2011"
_NATIONAL_SEP = f"[ \\-/{_SPACES}{_HYPHENS}]"
_INTERNATIONAL_SEP = f"[ \\-/.{_SPACES}{_HYPHENS}]"
_PHONE = re.compile(
    f"(?<![\\w+\\uff0b/])(?:"
    f"(?:[+\\uff0b]|00)[1-9]\\d{{0,2}}{_INTERNATIONAL_SEP}?(?:\\(0\\){_INTERNATIONAL_SEP}?)?\\(?\\d{{1,5}}\\)?"
    f"(?:{_INTERNATIONAL_SEP}{{0,3}}\\d){{5,}}"
    f"|(?:\\(0\\d{{1,5}}\\)|0\\d{{1,5}})(?:{_NATIONAL_SEP}{{0,3}}\\d){{5,}})(?![\\w])")
# What a display name carries besides the name: custom emoji, bracketed pronouns, symbols.
_SHORTCODE = re.compile(r":[\w\-]+:")
_BRACKETS = re.compile(r"\([^)]*\)|\[[^\]]*\]|\{[^}]*\}")
_NAME_SEPARATORS = re.compile(r"[^\w\s'’.\-]+")
_MIN_NAME_LETTERS = 3


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


def name_parts(display_name: str) -> list[str]:
    """The names a display name holds: "Anna Müller :verified: (sie/ihr) | Köln" -> ["Anna Müller", "Köln"].

    Custom emoji, bracketed pronouns and symbols separate names; a part needs three letters,
    so that initials and emoji-only names do not blank out ordinary words.
    """
    text = unicodedata.normalize("NFC", remove_invisible(str(display_name or "")))
    text = _BRACKETS.sub(" | ", _SHORTCODE.sub(" | ", text))
    parts = []
    for part in _NAME_SEPARATORS.split(text):
        part = " ".join(part.split()).strip(" .-'’")
        if sum(ch.isalpha() for ch in part) >= _MIN_NAME_LETTERS:
            parts.append(part)
    return list(dict.fromkeys(parts))


def _names_pattern(names: Iterable[str]) -> re.Pattern | None:
    """One pattern for all `names`, in any case and with any whitespace between (or instead of) the
    spaces; a hashtag of the name (`#AnnaMüller`) goes with it. Longest names first."""
    alternatives = set()
    for name in names:
        for part in name_parts(name):
            for form in {part, unicodedata.normalize("NFKC", part)}:
                alternatives.add(r"\s*".join(re.escape(word) for word in form.split()))
    if not alternatives:
        return None
    body = "|".join(sorted(alternatives, key=len, reverse=True))
    return re.compile(f"(?<![\\w@\\uff20.])#?(?:{body})(?![\\w@\\uff20])", re.IGNORECASE)


def scrub_and_count(text: str, names: Iterable[str] = ()) -> tuple[str, Counter]:
    """`text` with invisible characters removed and `names` (display names), mentions, addresses
    and phone numbers replaced; and how many of each were replaced (keys: name, user, email, phone)."""
    counts: Counter = Counter()
    text = remove_invisible(text)
    pattern = _names_pattern(names)
    steps = ([("name", pattern, NAME)] if pattern else []) + [
        ("email", _ADDRESS, EMAIL), ("email", _OBFUSCATED_ADDRESS, EMAIL), ("user", _MENTION, MENTION),
        ("phone", _PHONE, PHONE)]
    for kind, regex, placeholder in steps:
        text, replaced = regex.subn(placeholder, text)
        if replaced:
            counts[kind] += replaced
    return text, counts


def scrub_personal_data(text: str, names: Iterable[str] = ()) -> str:
    """`text` with invisible characters removed and names, mentions, addresses and phone numbers replaced."""
    return scrub_and_count(text, names)[0]
