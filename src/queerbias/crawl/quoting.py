"""How much of a hostile server's answer a message may repeat: one printable line, at most 200 characters.

Error texts end up on the terminal, in logs and in stats.json; a web page, a Misskey
answer or a multi-kilobyte HTTP reason phrase copied whole made a 200 KB stats.json. A
server also chooses the bytes of its reason: escape sequences (CSI `ESC [ ... m`, OSC
titles), a bell, C1 controls and bidirectional overrides would recolour, retitle or
reorder the terminal that prints the instance's line. They are removed, not escaped:
nothing of them is worth keeping.
"""

from __future__ import annotations

import re

from queerbias.text.scrub import remove_invisible

QUOTE_CHARS = 200
# ECMA-48 escape sequences: CSI (`ESC [` or C1 0x9b, parameters, a final byte), OSC (`ESC ]` or 0x9d, up to
# BEL, ST or the end), and the two-byte ones (`ESC` and one byte of 0x40-0x5f).
_ESCAPES = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
                      r"|\x1b[@-_]?")
_CONTROLS = re.compile(r"[^\S ]|[\x00-\x1f\x7f-\x9f]")  # whitespace other than a space, and every control


def quote(text: object, limit: int = QUOTE_CHARS) -> str:
    """`text` on one printable line (no controls, escape sequences or invisible characters) and at most
    `limit` characters."""
    line = _CONTROLS.sub(" ", remove_invisible(_ESCAPES.sub("", str(text))))
    line = re.sub(" +", " ", line).strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"
