"""Why a post does not go into the corpus.

Checks run in a fixed order and the first that applies is the recorded reason,
so stats.json can say how many posts each rule removed. People's opt-outs come
first: a post of someone who asked not to be indexed is never looked at further.
A content warning alone is not a reason to drop a post.
"""

from __future__ import annotations

import re

from queerbias.text.html import html_to_text
from queerbias.text.keywords import KeywordMatcher
from queerbias.text.language import is_german

OPTED_OUT, NSFW, BOT, AUTOMATED, NOT_GERMAN, NO_KEYWORD, EMPTY = (
    "opted_out", "nsfw", "bot", "automated", "not_german", "no_keyword", "empty")

_OPT_OUT_TAG = re.compile(r"#no(?:bot|index)\b", re.IGNORECASE)
_NSFW_TAG = re.compile(r"#nsfw\b", re.IGNORECASE)
# Templated announcements servers and their admins post by script.
_AUTOMATED = re.compile(
    r"automatisch (?:generiert|erstellt|gepostet|veröffentlicht)|automatically (?:generated|posted)"
    r"|this is an automated|dies ist eine automatische"
    r"|(?:geplante |scheduled )?(?:wartungsarbeiten|serverwartung|server maintenance|scheduled maintenance)"
    r"|(?:dieses konto|dieser account|this account) (?:ist umgezogen|has moved)",
    re.IGNORECASE,
)


def opted_out(account) -> bool:
    """The author asked not to be indexed: `indexable: false`, `noindex: true`, or #nobot/#noindex in the profile."""
    if account.get("indexable") is False or account.get("noindex") is True:
        return True
    profile = [account.get("note") or ""] + [f.get("value") or "" for f in account.get("fields") or []]
    return any(_OPT_OUT_TAG.search(html_to_text(part)) for part in profile)


def drop_reason(status, text: str, matcher: KeywordMatcher) -> str | None:
    """First reason to drop `status` (an unwrapped original, `text` its cleaned content), or None to keep it."""
    account = status.get("account") or {}
    if opted_out(account):
        return OPTED_OUT
    tags = {(t.get("name") or "").lower() for t in status.get("tags") or []}
    if "nsfw" in tags or _NSFW_TAG.search(html_to_text(status.get("content") or "")):
        return NSFW
    if account.get("bot"):
        return BOT
    if _AUTOMATED.search(text):
        return AUTOMATED
    if not text:
        return EMPTY
    if not is_german(text, declared=status.get("language")):
        return NOT_GERMAN
    if not matcher.find(text):
        return NO_KEYWORD
    return None
