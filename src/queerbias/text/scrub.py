"""Remove what identifies or contacts a person from corpus text, and what hides from the eye.

Crawled posts and articles are GDPR Art. 9 data: a corpus must not carry a way to reach
or name their authors. Mentions (`@alice`, `@alice@chaos.social`), e-mail addresses,
bare fediverse handles (`alice@chaos.social`, which look exactly like e-mail addresses),
phone numbers and, where the caller knows them, people's display names are replaced by
placeholders, so the sentence stays readable for a language model while the person does not.

People who do not want to be found by a scraper write their contacts so that one misses
them, and those spellings count too: a leading `.@user`, the fullwidth `＠`, hosts on
internationalised domain names (`bücher.de`, `xn--bcher-kva.de`), `name(at)host.de`,
`name [at] host [dot] de`, `name at host dot de` and `name @ host.de`; profile addresses
(`host/@name`, `host/users/name`, with or without a scheme) become `<user>`; phone numbers
separated by dots (`+49.170.…`, international form only, so that dates never match), by
thin and narrow no-break spaces or by dashes (`0170 – 123 45 67`), in fullwidth digits too.

Names (display names, and usernames written plainly) are matched on a folded copy of the
text (NFKC, case-folded, accents removed; `ä` also as `ae`), so `Anna Müller`, `ANNA
MÜLLER`, `Ａｎｎａ`, `#Anna_Müller`, `#annamueller` and a hashtag that contains the name
(`#annamuellerfotografie`) all go. Contacts are replaced first, names last.

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
_BRACKETED = r"\s*[(\[{<\uff08\uff3b]\s*(?:WORD)\s*[)\]}>\uff09\uff3d]\s*"
_OBFUSCATED_AT = _BRACKETED.replace("WORD", r"at|ät|bei|@|\uff20")
_OBFUSCATED_DOT = _BRACKETED.replace("WORD", r"dot|punkt|\.")
_SPACED_DOT = f"\\s+{_DOT}\\s+"  # `chaos . social`: a dot with spaces on both sides (one side is a sentence's end)
_LABEL = r"[^\W_](?:[\w\-]*[^\W_])?"  # a host label in any script
_TLD = r"(?:xn--[a-z0-9\-]+|[^\W\d_]{2,})"
_HOST = f"{_LABEL}(?:{_DOT}{_LABEL})*{_DOT}{_TLD}"
_ANY_DOT = f"(?:{_DOT}|{_SPACED_DOT}|{_OBFUSCATED_DOT})"
_OBFUSCATED_HOST = f"{_LABEL}(?:{_ANY_DOT}{_LABEL})*{_ANY_DOT}{_TLD}"
_LOCAL_PART = r"(?<![\w@\uff20.+\-])[\w.+\-]+"
# An address `name@host.tld` (e-mail or bare handle), and its spellings with `(at)` and `[dot]`.
_ADDRESS = re.compile(f"{_LOCAL_PART}{_AT}{_HOST}(?![\\w\\-])")
_OBFUSCATED_ADDRESS = re.compile(f"{_LOCAL_PART}{_OBFUSCATED_AT}{_OBFUSCATED_HOST}(?![\\w\\-])", re.IGNORECASE)
# `name at host dot de`, `name @ host.de`: the words, or an @ with spaces around it.
_WORD_DOT = r"(?:\s+(?:dot|punkt)\s+|" + _SPACED_DOT + "|" + _DOT + ")"
_SPELLED_ADDRESS = re.compile(f"{_LOCAL_PART}(?:\\s+(?:at|ät)\\s+|\\s+{_AT}\\s*|\\s*{_AT}\\s+)"
                              f"{_LABEL}(?:{_WORD_DOT}{_LABEL})*{_WORD_DOT}{_TLD}(?![\\w\\-])", re.IGNORECASE)
# A profile address: `host/@name` or `host/users/name`, with or without a scheme.
_PROFILE = re.compile(f"(?:https?://|(?<![\\w.@/])){_HOST}(?::\\d+)?/(?:@|users/)[\\w.\\-]*\\w", re.IGNORECASE)
# A mention `@name` or `@name@host` (also `.@name`), not the middle of an address.
_MENTION = re.compile(f"(?<![\\w@\\uff20+\\-]){_AT}\\w(?:[\\w.\\-]*\\w)?(?:{_AT}{_HOST})?(?![\\w@\\uff20])")
# Phone numbers: international (+49 / 0049 ...) or German national (0 + area code) with at
# least 7 further digits, separated by spaces (thin and narrow no-break ones too), slashes or
# hyphens. Dots separate only numbers in international form, so that dates (01.05.2024),
# amounts and times never match.
_SPACES = "\u00a0\u2007\u2009\u202f\u3000"
# hyphens, figure, en and em dash, horizontal bar, minus, fullwidth hyphen-minus
_HYPHENS = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\uff0d"
_SLASHES = "/\u2044\u2215\uff0f"  # slash, fraction and division slash, fullwidth slash
_NATIONAL_SEP = f"[ \\-{_SLASHES}{_SPACES}{_HYPHENS}]"
_INTERNATIONAL_SEP = f"[ \\-.\uff0e{_SLASHES}{_SPACES}{_HYPHENS}]"
_OPEN, _CLOSE = "[(\uff08]", "[)\uff09]"  # brackets, ASCII and fullwidth
_ZERO, _NONZERO = "[0\uff10]", "[1-9\uff11-\uff19]"  # ASCII and fullwidth digits (`\\d` has both)
_DATE_SEP = f"[\\-{_SLASHES}{_HYPHENS}]"
_DATE = f"\\d{{1,2}}{_DATE_SEP}\\d{{1,2}}{_DATE_SEP}\\d{{2,4}}(?!\\d)"  # 01-05-2024, 1/5/24: a date, not a number
_PHONE = re.compile(
    f"(?<![\\w+\\uff0b{_SLASHES}])(?!{_DATE})(?:"
    f"(?:[+\\uff0b]|{_ZERO}{{2}}){_NONZERO}\\d{{0,2}}{_INTERNATIONAL_SEP}?(?:{_OPEN}{_ZERO}{_CLOSE}{_INTERNATIONAL_SEP}?)?"
    f"{_OPEN}?\\d{{1,5}}{_CLOSE}?(?:{_INTERNATIONAL_SEP}{{0,3}}\\d){{5,}}"
    f"|(?:{_OPEN}{_ZERO}\\d{{1,5}}{_CLOSE}|{_ZERO}\\d{{1,5}})(?:{_NATIONAL_SEP}{{0,3}}\\d){{5,}})(?![\\w])")
# What a display name carries besides the name: custom emoji, bracketed pronouns, symbols.
_SHORTCODE = re.compile(r":[\w\-]+:")
_BRACKETS = re.compile(r"\([^)]*\)|\[[^\]]*\]|\{[^}]*\}")
_APOSTROPHES = "'\u2019\u02bc\u2018`"  # ASCII, the phone keyboard's ’, the modifier letter, ‘ and the backtick
_NAME_SEPARATORS = re.compile(f"[^\\w\\s{_APOSTROPHES}.\\-\u2010\u2011]+")
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
        part = " ".join(part.split()).strip(f" .-{_APOSTROPHES}")
        if sum(ch.isalpha() for ch in part) >= _MIN_NAME_LETTERS:
            parts.append(part)
    return list(dict.fromkeys(parts))


_TRANSLITERATION = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue", "ß": "ss"})
# Between the words of a name: spaces, `_`, hyphens, dots, apostrophes, or nothing (`Anna-Lena`, `Anna Lena`,
# `AnnaLena`, `D’Angelo`, `DAngelo`); a name's words are split at the same characters.
_WORD_BREAKS = f"\\s_\\-\u2010\u2011.·{_APOSTROPHES}"
_NAME_JOINERS = f"[{_WORD_BREAKS}]*"
_GENITIVE = f"(?:[{_APOSTROPHES}]?s|[{_APOSTROPHES}])?"  # `Anna Müllers`, `Anna’s`, `Hans'`


def fold(text: str) -> tuple[str, list[int]]:
    """`text` as names are compared (NFKC, case-folded, without accents or invisible characters, `ı` as `i`),
    and for each folded character the index of the character of `text` it came from."""
    folded, origin = [], []
    for index, char in enumerate(text):
        part = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", char).casefold())
        part = "".join(c for c in part if not unicodedata.combining(c) and not _INVISIBLE.match(c))
        part = part.replace("\u0131", "i")  # Turkish dotless ı: `Yılmaz` is `YILMAZ` and `Yilmaz`
        folded.append(part)
        origin += [index] * len(part)
    return "".join(folded), origin


def _alternatives(names: Iterable[str], min_letters: int, parts: bool) -> set[str]:
    """Folded regex alternatives for `names` (each part of a display name, or each username as it is), in
    their own spelling and with umlauts written out (`Müller`, `Mueller`)."""
    found = set()
    for name in names:
        for part in (name_parts(name) if parts else [unicodedata.normalize("NFC", str(name or "").strip())]):
            for form in {part, part.translate(_TRANSLITERATION)}:
                words = [word for word in re.split(f"[{_WORD_BREAKS}]+", fold(form)[0]) if word]
                if sum(ch.isalpha() for word in words for ch in word) >= min_letters:
                    found.add(_NAME_JOINERS.join(re.escape(word) for word in words))
    return found


def _names_pattern(names: Iterable[str], min_letters: int = _MIN_NAME_LETTERS, parts: bool = True) -> re.Pattern | None:
    """One pattern for all `names` over folded text: the name with any spacing, `_`, `-`, an apostrophe or
    nothing between its words (`#Anna_Müller`, `annamueller`), in the genitive (`Anna Müllers`), or a hashtag
    that contains it (`#annamuellerfotografie`)."""
    alternatives = _alternatives(names, min_letters, parts)
    if not alternatives:
        return None
    body = "|".join(sorted(alternatives, key=len, reverse=True))
    return re.compile(f"#\\w*(?:{body})\\w*|(?<![\\w@.#])(?:{body}){_GENITIVE}(?![\\w@])")


def _replace_folded(text: str, pattern: re.Pattern, placeholder: str) -> tuple[str, int]:
    """Replace in `text` what `pattern` finds in its folded copy."""
    folded, origin = fold(text)
    spans = [(origin[m.start()], origin[m.end() - 1] + 1) for m in pattern.finditer(folded) if m.end() > m.start()]
    for start, end in reversed(spans):
        text = text[:start] + placeholder + text[end:]
    return text, len(spans)


def scrub_and_count(text: str, names: Iterable[str] = (), usernames: Iterable[str] = ()) -> tuple[str, Counter]:
    """`text` with invisible characters removed, contacts replaced (addresses, profile addresses, mentions,
    phone numbers), then `names` (display names) and `usernames` (written plainly) in any spelling; and how
    many of each were replaced (keys: email, user, phone, name)."""
    counts: Counter = Counter()
    text = remove_invisible(text)
    steps = [("email", _ADDRESS, EMAIL), ("email", _OBFUSCATED_ADDRESS, EMAIL), ("email", _SPELLED_ADDRESS, EMAIL),
             ("user", _PROFILE, MENTION), ("user", _MENTION, MENTION), ("phone", _PHONE, PHONE)]
    for kind, regex, placeholder in steps:
        text, replaced = regex.subn(placeholder, text)
        if replaced:
            counts[kind] += replaced
    for kind, pattern, placeholder in (("name", _names_pattern(names), NAME),
                                       ("user", _names_pattern(usernames, parts=False), MENTION)):
        if pattern is not None:
            text, replaced = _replace_folded(text, pattern, placeholder)
            if replaced:
                counts[kind] += replaced
    return text, counts


def scrub_personal_data(text: str, names: Iterable[str] = (), usernames: Iterable[str] = ()) -> str:
    """`text` with invisible characters removed and contacts, names and usernames replaced."""
    return scrub_and_count(text, names, usernames)[0]
