"""One self-contained HTML page: it opens offline, from a file, in any browser.

Figures are inlined as `data:` URIs, the style sheet is inline, and the page has no
script; its Content-Security-Policy allows nothing else (no request leaves the page,
even if a value in it were hostile). Every text is escaped.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1400px; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.85em; width: 100%; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; vertical-align: top; overflow-wrap: break-word; }
.long td { overflow-wrap: anywhere; }
th { background: #f3f3f3; } tfoot td { font-weight: 600; background: #fafafa; }
td .detail { text-decoration: underline dotted #999; cursor: help; }
caption { text-align: left; font-weight: 600; padding: 0.3em 0; }
.notes { font-size: 0.8em; color: #555; max-width: 80em; }
.goal { padding: 0.6em 1em; border-radius: 4px; border: 2px solid #0072B2; margin-bottom: 1em; }
.goal p { margin: 0.3em 0; } .goal .unmet { color: #8a2b0d; } .goal .random { color: #8a2b0d; font-weight: 600; }
.status { padding: 0.6em 1em; border-radius: 4px; }
.complete { background: #e7f5ec; } .incomplete { background: #fdecea; border: 2px solid #c0392b; }
figure { margin: 1em 0; } img { max-width: 100%; height: auto; border: 1px solid #eee; box-sizing: border-box; }
details { margin: 0.5em 0 1em; } summary { cursor: pointer; font-weight: 600; }
pre { background: #f6f6f6; padding: 1em; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.8em; }
"""


def escape(text) -> str:
    return html.escape(str(text))


def figure(path: Path, caption: str) -> str:
    """A PNG inlined as a data: URI, with its caption."""
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return (f'<figure><img src="data:image/png;base64,{data}" alt="{escape(caption)}">'
            f"<figcaption>{escape(caption)}</figcaption></figure>")


def section(title: str, *parts: str, level: int = 2) -> str:
    return f"<section><h{level}>{escape(title)}</h{level}>\n" + "\n".join(parts) + "\n</section>"


def paragraph(text: str) -> str:
    return f"<p>{escape(text)}</p>"


def listing(items: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{escape(item)}</li>" for item in items) + "</ul>"


def preformatted(text: str) -> str:
    return f"<pre>{escape(text)}</pre>"


def long_values(table_html: str) -> str:
    """A table whose cells hold long unbroken values (checksums, paths), which may break anywhere."""
    return f'<div class="long">{table_html}</div>'


def folded(title: str, *parts: str) -> str:
    """Content behind a one-line summary, opened with a click (no script)."""
    return f"<details><summary>{escape(title)}</summary>\n" + "\n".join(parts) + "\n</details>"


def goal(aim: str, answer: str, random: str, met: bool) -> str:
    """The page's first block: the goal, whether any run met it and why not, and a warning where models have
    random weights; short enough to be read on the first screen."""
    notes = f'<p class="random">{escape(random)}</p>' if random else ""
    return (f'<div class="goal"><p>{escape(aim)}</p><p class="{"met" if met else "unmet"}"><strong>'
            f"{escape(answer)}</strong></p>{notes}</div>")


def status(complete: bool, lines: list[str], note: str = "") -> str:
    extra = f"<p>{escape(note)}</p>" if note else ""
    if complete:
        return f'<div class="status complete"><strong>Complete</strong>: every cell finished.{extra}</div>'
    return ('<div class="status incomplete"><strong>INCOMPLETE</strong>: figures are given only for models '
            "and runs with every seed; missing:" + listing(lines) + extra + "</div>")


def page(title: str, body: list[str]) -> str:
    return ("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
            f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
            f"<h1>{escape(title)}</h1>\n" + "\n".join(body) + "\n</body>\n</html>\n")
