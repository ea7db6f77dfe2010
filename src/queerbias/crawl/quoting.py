"""How much of a hostile server's answer a message may repeat: one line, at most 200 characters.

Error texts end up on the terminal, in logs and in stats.json; a web page, a Misskey
answer or a multi-kilobyte HTTP reason phrase copied whole made a 200 KB stats.json.
"""

from __future__ import annotations

import re

QUOTE_CHARS = 200


def quote(text: object, limit: int = QUOTE_CHARS) -> str:
    """`text` on one line and at most `limit` characters."""
    line = re.sub(r"\s+", " ", str(text)).strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"
