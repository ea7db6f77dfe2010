"""Turn a post's HTML into corpus text.

Links (with or without a scheme: `instagram.com/annamueller`) and custom `:emoji:`
shortcodes carry no language and would leak URLs into the corpus; invisible characters go;
Unicode emoji are language and stay. Lines made only of hashtags (the tag blocks under many
posts) keep just the tags that name a keyword, so "#queer #fediverse #mastodon" becomes
"#queer". Only then are contacts (e-mail addresses, bare handles, profile addresses,
mentions, phone numbers) and people replaced (`queerbias.text.scrub`): the display names the
status carries (its author's, and those of accounts it mentions or quotes) in every spelling,
and their usernames written plainly. In this order a hashtag line such as
"#queer #annamueller #annamuellerfotografie" loses the name, whichever step sees it first. A
post's `tags` are then cut to the hashtags still in its text, so that no tag keeps what the
cleaning removed (the author's name as a hashtag, say).

A status whose text cannot be written as UTF-8 (a lone surrogate, which JSON's `\\ud800`
escapes let a server send) is `BadText`: lxml would silently cut the text at it, so it is
refused before anything is cleaned, and the crawler skips and counts it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from queerbias.text.html import html_to_text
from queerbias.text.keywords import KeywordMatcher
from queerbias.text.scrub import remove_invisible, scrub_and_count

_URL = re.compile(r"(?:https?://|www\.)\S+|(?<![\w@.])(?:[^\W_][\w\-]*\.)+[a-z]{2,}(?::\d+)?/\S*", re.IGNORECASE)
_SHORTCODE = re.compile(r"(?<![\w:]):[A-Za-z0-9_]*[A-Za-z][A-Za-z0-9_]*:(?![\w:])")
_HASHTAG_LINE = re.compile(r"^(?:[#\uff03]\w+\s*)+$")
_HASHTAG = re.compile(r"(?<![\w#])#(\w+)")
_SPACES = re.compile(r"[ \t]+")


class BadText(ValueError):
    """A status whose text is not valid Unicode (a lone surrogate)."""


def require_utf8(status) -> None:
    """BadText unless every string of `status` can be written as UTF-8."""
    try:
        json.dumps(status, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        raise BadText("status with text that is not valid Unicode (a lone surrogate)") from None


@dataclass(frozen=True)
class CleanedText:
    """A post's corpus text and how many pieces of personal data were replaced, per kind."""

    text: str
    scrubbed: Counter


def _reduce_hashtag_line(line: str, matcher: KeywordMatcher, relevant_tags: frozenset[str]) -> str:
    tags = line.split()
    return " ".join(t for t in tags if t[1:].lower() in relevant_tags or matcher.find(t))


def _fold_tag(tag: str) -> str:
    return unicodedata.normalize("NFKC", tag).casefold()


def clean_html(html: str, matcher: KeywordMatcher, relevant_tags: frozenset[str] = frozenset(),
               names: tuple[str, ...] = (), usernames: tuple[str, ...] = ()) -> CleanedText:
    """Plain NFC text of a post: no links or custom emoji; hashtag lines cut to relevant tags; then no
    contacts, no `names` (display names) and no `usernames`, in any spelling."""
    text = remove_invisible(html_to_text(html))
    text = _URL.sub(" ", text)
    text = _SHORTCODE.sub(" ", text)
    lines = []
    for line in text.split("\n"):
        line = _SPACES.sub(" ", line).strip()
        if _HASHTAG_LINE.match(line):
            line = _reduce_hashtag_line(line, matcher, relevant_tags)
        lines.append(line)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    text, scrubbed = scrub_and_count(text, names, usernames)
    return CleanedText(unicodedata.normalize("NFC", text), scrubbed)


def _carried_accounts(status) -> list[dict]:
    """The accounts a status names: its author, and the accounts it mentions or quotes (servers that send
    their display names with mentions; Mastodon 4.4 quotes)."""
    accounts = [status.get("account")]
    accounts += [m for m in status.get("mentions") or [] if isinstance(m, dict)]
    quote = status.get("quote")
    if isinstance(quote, dict) and isinstance(quote.get("quoted_status"), dict):
        accounts.append(quote["quoted_status"].get("account"))
    return [a for a in accounts if isinstance(a, dict)]


def carried_names(status) -> tuple[str, ...]:
    """The display names of the accounts a status names."""
    names = [str(a.get("display_name") or "") for a in _carried_accounts(status)]
    return tuple(dict.fromkeys(name for name in names if name.strip()))


def carried_usernames(status) -> tuple[str, ...]:
    """The usernames of the accounts a status names (`username`, and the local part of `acct`)."""
    names = [str(a.get(field) or "").split("@")[0] for a in _carried_accounts(status) for field in ("username", "acct")]
    return tuple(dict.fromkeys(name for name in names if name.strip()))


def clean_status(status, matcher: KeywordMatcher, relevant_tags: frozenset[str] = frozenset()) -> CleanedText:
    """The cleaned text of an (unwrapped) status, with the names and usernames it carries scrubbed too."""
    require_utf8(status)
    return clean_html(status.get("content") or "", matcher, relevant_tags, carried_names(status),
                      carried_usernames(status))


def tags_in_text(tags, text: str) -> list[str]:
    """The status's tag names (lower case, sorted) that are still a hashtag in the cleaned `text`."""
    present = {_fold_tag(t) for t in _HASHTAG.findall(text)}
    names = {str(t.get("name") or "").lower() for t in tags or [] if isinstance(t, dict) and t.get("name")}
    return sorted(name for name in names if _fold_tag(name) in present)
