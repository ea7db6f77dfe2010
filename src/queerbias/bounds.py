"""The bounds every reader puts on a value before it builds it: digits of an integer, nesting depth.

Python's own limits end in a traceback, not a refusal: `int()` of more than 4,300 digits
raises ValueError (inside `json.loads` and PyYAML too), and JSON or YAML nested deeper
than the interpreter's recursion limit raises RecursionError. Our limits lie far below
those and far above anything a file of ours holds, so a reader (`records`, `yamlio`,
`options`) checks them first and names what it found. YAML aliases have a bound of their
own (`yamlio`).
"""

from __future__ import annotations

from typing import Any

#: digits of an integer: a 64-bit number has 19, Python's `int()` refuses more than 4,300
MAX_DIGITS = 100
#: lists and mappings inside each other; every file of ours stays below 10
MAX_DEPTH = 100


class BoundError(ValueError):
    """A value beyond a bound: the message says which and what was found."""


def bounded_int(text: str) -> int:
    """`int(text)` once its digits are counted (at most `MAX_DIGITS`): a `parse_int` for JSON."""
    check_digits(text)
    return int(text)


def check_digits(text: str) -> None:
    """Refuse an integer written with more than `MAX_DIGITS` digits, before anything converts it."""
    digits = sum(character.isdigit() for character in text)
    if digits > MAX_DIGITS:
        raise BoundError(f"an integer of {digits:,} digits, more than the {MAX_DIGITS} any value here can have")


def check_depth(value: Any) -> None:
    """Refuse lists and mappings nested more than `MAX_DEPTH` deep (walked without recursion)."""
    pending = [(value, 1)] if isinstance(value, (dict, list)) else []
    while pending:
        item, depth = pending.pop()
        if depth > MAX_DEPTH:
            raise BoundError(too_deep())
        pending.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item)
                       if isinstance(child, (dict, list)))  # only containers: a flat record costs one pass


def too_deep() -> str:
    return f"lists or mappings nested more than {MAX_DEPTH} deep; no file of ours nests so deep"
