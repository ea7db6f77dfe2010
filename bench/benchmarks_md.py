"""Write one benchmark's results into its marked section of BENCHMARKS.md."""

from __future__ import annotations

import re
from pathlib import Path

BENCHMARKS_MD = Path(__file__).resolve().parents[1] / "BENCHMARKS.md"


def write_section(name: str, body: str, path: Path = BENCHMARKS_MD) -> None:
    """Replace the text between this benchmark's markers (or append a new section)."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    block = f"{begin}\n{body.rstrip()}\n{end}"
    if begin in text:
        text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")


def markdown_table(header: list[str], right: list[bool], rows: list[list[str]]) -> list[str]:
    """A markdown table's lines: the header, its rule (`right`: which columns align right), the rows."""
    rule = "|".join("---:" if flag else "---" for flag in right)
    return [f"| {' | '.join(header)} |", f"|{rule}|"] + [f"| {' | '.join(row)} |" for row in rows]
