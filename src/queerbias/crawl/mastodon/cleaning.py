"""Turn a post's HTML into corpus text.

Links and custom `:emoji:` shortcodes carry no language and would leak URLs into the
corpus; mentions, e-mail addresses, bare handles and phone numbers become placeholders
(`queerbias.text.scrub`), and invisible characters go; Unicode emoji are language and stay.
Lines made only of hashtags (the tag blocks under many posts) keep just the tags
that name a keyword, so "#queer #fediverse #mastodon" becomes "#queer".
"""

from __future__ import annotations

import re
import unicodedata

from queerbias.text.html import html_to_text
from queerbias.text.keywords import KeywordMatcher
from queerbias.text.scrub import scrub_personal_data

_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
_SHORTCODE = re.compile(r"(?<![\w:]):[A-Za-z0-9_]*[A-Za-z][A-Za-z0-9_]*:(?![\w:])")
_HASHTAG_LINE = re.compile(r"^(?:#\w+\s*)+$")
_SPACES = re.compile(r"[ \t]+")


def _reduce_hashtag_line(line: str, matcher: KeywordMatcher, relevant_tags: frozenset[str]) -> str:
    tags = line.split()
    return " ".join(t for t in tags if t[1:].lower() in relevant_tags or matcher.find(t))


def clean_post_html(html: str, matcher: KeywordMatcher, relevant_tags: frozenset[str] = frozenset()) -> str:
    """Plain NFC text of a post: no links or custom emoji, no personal data; hashtag lines cut to relevant tags."""
    text = html_to_text(html)
    text = _URL.sub(" ", text)
    text = _SHORTCODE.sub(" ", text)
    text = scrub_personal_data(text)
    lines = []
    for line in text.split("\n"):
        line = _SPACES.sub(" ", line).strip()
        if _HASHTAG_LINE.match(line):
            line = _reduce_hashtag_line(line, matcher, relevant_tags)
        lines.append(line)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return unicodedata.normalize("NFC", text)
