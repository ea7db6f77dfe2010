"""Generic table renderers: one table description, written as Markdown, LaTeX, HTML or CSV.

Cells are plain text with optional bold and superscript marks (significance stars),
so every suite's report tables look alike and escaping is done in one place.
"""

from __future__ import annotations

import csv
import html
import io
import re
from dataclasses import dataclass, field

MISSING = "–"
_MD_SPECIAL = re.compile(r"([\\|*_`])")
_TEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "±": r"$\pm$", "Δ": r"$\Delta$", "–": "--", "−": "$-$",
}
_TEX_MINUS = re.compile(r"(?<![\w.])-(?=\d)")


@dataclass(frozen=True)
class Cell:
    """Cell text, optionally bold, with marks set as a superscript (e.g. stars) and, in HTML, a
    `detail` shown on hover (what a compact cell leaves out: the interval, p)."""

    text: str
    bold: bool = False
    marks: str = ""
    detail: str = ""


#: a table cell: text, a Cell, or several parts shown as "a / b"
CellLike = str | Cell | tuple


@dataclass
class Table:
    """Header, body rows and the trailing summary rows (e.g. Overall) set off by a rule."""

    header: list[str]
    rows: list[list[CellLike]]
    summary_rows: list[list[CellLike]] = field(default_factory=list)
    caption: str = ""
    notes: str = ""


def fmt(value: float | None, digits: int = 2, signed: bool = False) -> str:
    """A number with fixed decimals (a sign on deltas); a dash where there is none. A value that
    rounds to zero is written 0 without a sign (floating-point noise never reads "-0.000")."""
    if value is None:
        return MISSING
    text = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    return text.lstrip("+-") if float(text) == 0 else text


def to_markdown(table: Table) -> str:
    """A GitHub-flavoured Markdown table, caption above in bold, notes below."""
    lines = [f"**{_md_escape(table.caption)}**", ""] if table.caption else []
    lines.append(_md_row(table.header))
    lines.append("|" + "|".join([":---"] + ["---:"] * (len(table.header) - 1)) + "|")
    lines.extend(_md_row(row) for row in table.rows + table.summary_rows)
    if table.notes:
        lines += ["", _md_escape(table.notes)]
    return "\n".join(lines) + "\n"


def to_latex(table: Table) -> str:
    """A booktabs table (needs \\usepackage{booktabs}), summary rows after a \\midrule."""
    spec = "l" + "r" * (len(table.header) - 1)
    lines = [r"\begin{table}[t]", r"\centering", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
             _tex_row(table.header), r"\midrule"]
    lines.extend(_tex_row(row) for row in table.rows)
    if table.summary_rows:
        lines.append(r"\midrule")
        lines.extend(_tex_row(row) for row in table.summary_rows)
    lines += [r"\bottomrule", r"\end{tabular}"]
    caption = " ".join(part for part in (table.caption, table.notes) if part)
    if caption:
        lines.append(rf"\caption{{{_tex_escape(caption)}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def to_html(table: Table) -> str:
    """An HTML table (caption above, notes below), every text escaped; summary rows in <tfoot>."""
    def row(cells: list[CellLike], tag: str) -> str:
        return "<tr>" + "".join(f"<{tag}>{_html_cell(cell)}</{tag}>" for cell in cells) + "</tr>"

    parts = ["<table>"]
    if table.caption:
        parts.append(f"<caption>{html.escape(table.caption)}</caption>")
    parts.append("<thead>" + row(table.header, "th") + "</thead>")
    parts.append("<tbody>" + "".join(row(r, "td") for r in table.rows) + "</tbody>")
    if table.summary_rows:
        parts.append("<tfoot>" + "".join(row(r, "td") for r in table.summary_rows) + "</tfoot>")
    parts.append("</table>")
    if table.notes:
        parts.append(f'<p class="notes">{html.escape(table.notes)}</p>')
    return "\n".join(parts) + "\n"


def _html_cell(cell: CellLike) -> str:
    rendered = []
    for part in _parts(cell):
        text = html.escape(part.text) + (f"<sup>{html.escape(part.marks)}</sup>" if part.marks else "")
        text = f"<strong>{text}</strong>" if part.bold else text
        rendered.append(f'<span class="detail" title="{html.escape(part.detail)}">{text}</span>' if part.detail
                        else text)
    return " / ".join(rendered)


def to_csv(header: list[str], rows: list[list]) -> str:
    """Machine-readable rows: full-precision numbers, None as an empty field."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([["" if value is None else value for value in row] for row in rows])
    return buffer.getvalue()


def _parts(cell: CellLike) -> list[Cell]:
    if isinstance(cell, tuple):
        return [part if isinstance(part, Cell) else Cell(str(part)) for part in cell]
    return [cell if isinstance(cell, Cell) else Cell(str(cell))]


def _md_escape(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", text)


def _md_cell(cell: CellLike) -> str:
    rendered = []
    for part in _parts(cell):
        text = _md_escape(part.text) + _md_escape(part.marks)
        rendered.append(f"**{text}**" if part.bold else text)
    return " / ".join(rendered)


def _md_row(row: list[CellLike]) -> str:
    return "| " + " | ".join(_md_cell(cell) for cell in row) + " |"


def _tex_escape(text: str) -> str:
    escaped = "".join(_TEX_SPECIAL.get(char, char) for char in text)
    return _TEX_MINUS.sub("$-$", escaped)


def _tex_cell(cell: CellLike) -> str:
    rendered = []
    for part in _parts(cell):
        text = _tex_escape(part.text)
        if part.bold:
            text = rf"\textbf{{{text}}}"
        if part.marks:
            text += rf"$^{{{_tex_escape(part.marks)}}}$"
        rendered.append(text)
    return " / ".join(rendered)


def _tex_row(row: list[CellLike]) -> str:
    return " & ".join(_tex_cell(cell) for cell in row) + r" \\"
