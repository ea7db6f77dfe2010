"""Turn untrusted HTML (posts, feed entries) into plain text.

The input is treated as hostile: it is parsed by lxml's HTML parser (no network,
no entity expansion beyond HTML's own, huge trees refused), nothing in it is ever
executed, and the contents of script, style and similar elements are dropped
rather than shown as text. Block elements become line breaks so that paragraphs
and hashtag lines survive as lines.
"""

from __future__ import annotations

import re
import unicodedata

from lxml import etree
from lxml import html as lxml_html

# Elements whose content is never text meant for readers.
_SKIP = frozenset({"script", "style", "template", "noscript", "iframe", "object", "embed", "svg", "math",
                   "head", "title", "meta", "link", "select", "textarea", "button"})
# Elements that start a new line; paragraphs and headings get an empty line after them.
_BLOCK = frozenset({"p", "div", "li", "ul", "ol", "blockquote", "pre", "tr", "table", "section", "article",
                    "header", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "dd", "dt", "figure", "figcaption"})
_PARAGRAPH = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre"})

_PARSER = lxml_html.HTMLParser(remove_comments=True, remove_pis=True, no_network=True, huge_tree=False,
                               default_doctype=False)


def _walk(element, out: list[str]) -> None:
    tag = element.tag.lower() if isinstance(element.tag, str) else ""
    if tag in _SKIP or not isinstance(element.tag, str):
        # Comments and processing instructions have a non-string tag; their tail is still text.
        if element.tail:
            out.append(element.tail)
        return
    if tag == "br":
        out.append("\n")
    elif tag in _BLOCK:
        out.append("\n")
    if element.text:
        out.append(element.text)
    for child in element:
        _walk(child, out)
    if tag in _BLOCK:
        out.append("\n\n" if tag in _PARAGRAPH else "\n")
    if element.tail:
        out.append(element.tail)


def html_to_text(html: str) -> str:
    """Readable text of an HTML fragment or document: NFC, one space between words, paragraphs kept."""
    if not html or not html.strip():
        return ""
    try:
        root = lxml_html.fragment_fromstring(html, create_parent="div", parser=_PARSER)
    except (etree.ParserError, ValueError):
        return ""
    out: list[str] = []
    _walk(root, out)
    text = unicodedata.normalize("NFC", "".join(out)).replace("\xa0", " ")
    lines = [re.sub(r"[ \t\r\f\v]+", " ", line).strip() for line in text.split("\n")]
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()
