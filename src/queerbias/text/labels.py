"""Text that must mean what it shows: group labels and benchmark sentences.

Two strings that print the same can differ: a zero-width space, a bidirectional
control, a NUL, fullwidth letters, a Cyrillic "а" in a Latin word. As group labels they
would become separate groups that no table tells apart; as the two sentences of a pair
they would make a pair that differs only where nobody can see it. So a label is NFKC
normalised (fullwidth and compatibility forms become their plain letters) and refused
if it still holds an invisible, control or bidirectional character or mixes scripts;
a sentence is refused for the same characters, and for a word that mixes scripts.
"""

from __future__ import annotations

import functools
import re
import unicodedata

_SCRIPT_FAMILIES = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "HANGUL": "CJK"}
_WORD = re.compile(r"\w+")


def hidden_character(text: str) -> str | None:
    """A description of the first character that does not print as itself (control, format,
    bidirectional, private-use, unassigned, a line or paragraph break), else None.

    An ASCII space is the one whitespace allowed: values are whitespace-normalised when read.
    """
    if text.isprintable():  # the fast path: no Cc, Cf, Co, Cn, Cs, Zl, Zp, Zs other than " "
        return None
    for position, char in enumerate(text, start=1):
        if not char.isprintable():
            name = unicodedata.name(char, "unnamed")
            return f"the invisible or control character U+{ord(char):04X} ({name}) at character {position}"
    return None


@functools.lru_cache(maxsize=8192)  # per character: a benchmark's sentences use a few dozen letters
def script(char: str) -> str | None:
    """The script of a letter, from its Unicode name (LATIN, CYRILLIC, GREEK, ...); None otherwise."""
    if not unicodedata.category(char).startswith("L"):
        return None
    first = unicodedata.name(char, "UNKNOWN").split()[0]
    return _SCRIPT_FAMILIES.get(first, first)


def mixed_scripts(text: str) -> set[str]:
    """The scripts of `text`'s letters when there is more than one, else an empty set."""
    if text.isascii():
        return set()
    scripts = {s for s in map(script, text) if s is not None}
    return scripts if len(scripts) > 1 else set()


def label_problem(value: str) -> tuple[str, str | None]:
    """(the label NFKC-normalised, what is wrong with it or None)."""
    label = unicodedata.normalize("NFKC", value)
    hidden = hidden_character(label)
    if hidden:
        return label, f"holds {hidden}, so it would print like another label"
    scripts = mixed_scripts(label)
    if scripts:
        return label, (f"mixes {' and '.join(sorted(scripts))} letters (a look-alike letter?), so it would print "
                       "like another label")
    return label, None


def sentence_problem(text: str) -> str | None:
    """What makes a sentence differ from what it shows, or None."""
    hidden = hidden_character(text)
    if hidden:
        return f"holds {hidden}, so two sentences could differ where nobody sees it"
    if text.isascii():
        return None
    for word in _WORD.findall(text):
        scripts = mixed_scripts(word)
        if scripts:
            return (f"the word {word!r} mixes {' and '.join(sorted(scripts))} letters (a look-alike letter?), "
                    "so it is not the word it shows")
    return None
