"""Why a post does not go into the corpus.

Checks run in a fixed order and the first that applies is the recorded reason,
so stats.json can say how many posts each rule removed. People's wishes come first:
a post that is not public, or whose author opted out by any signal the fediverse
uses, is never looked at further. A content warning alone is not a reason to drop.

Opt-out signals of an account:

- `indexable: false` (Mastodon 4.2+: "include my public posts in search results"),
  and a *missing* `indexable` too: Mastodon before 4.2, Pleroma and Akkoma do not
  ask their users, and silence is not consent. `accept_missing_indexable` treats
  those servers' accounts as consenting, for researchers who decide otherwise;
- `discoverable: false` ("feature my profile and posts in discovery") and
  `noindex: true` ("keep my profile out of search engines");
- one of #nobot, #nobots, #noindex, #noai, #noki, #nosearch, #noarchive in the display
  name, the bio, or a profile field's name or value. The same tags on a post opt that post out;
- an account that moved (`moved`) to an account that opted out by any of these signals.

Suspended accounts (`suspended: true`) are not collected either.

Mastodon normalises hashtags, so a tag counts however it is spelt: in any case, with
fullwidth letters or the fullwidth `＃`, with accents, and with zero-width characters, soft
hyphens, underscores or hyphens inside (`#Ｎｏ\u200bＢｏｔ`, `#no_ai` and `#NoKI` all opt out).
"""

from __future__ import annotations

import re
import unicodedata

from queerbias.text.html import html_to_text
from queerbias.text.keywords import KeywordMatcher
from queerbias.text.language import is_german
from queerbias.text.scrub import remove_invisible

NOT_PUBLIC, OPTED_OUT, SUSPENDED, NSFW, BOT, AUTOMATED, NOT_GERMAN, NO_KEYWORD, EMPTY = (
    "not_public", "opted_out", "suspended", "nsfw", "bot", "automated", "not_german", "no_keyword", "empty")
# Why stored posts were taken out when a crawl or refresh saw their author or the post say no.
AUTHOR_OPTED_OUT, POST_OPTED_OUT = "author_opted_out", "post_opted_out"
_MAX_MOVES = 3  # how far a chain of `moved` accounts is followed (a hostile server may send a long one)

OPT_OUT_TAGS = ("nobot", "nobots", "noindex", "noai", "noki", "nosearch", "noarchive")
_OPT_OUT_TAG = re.compile(r"#(?:" + "|".join(OPT_OUT_TAGS) + r")(?![\w])")
_JOINERS = re.compile(r"(?<=\w)[_\-\u2010\u2011]+(?=\w)")
_NSFW_TAG = re.compile(r"#nsfw\b", re.IGNORECASE)
# Templated announcements servers and their admins post by script.
_AUTOMATED = re.compile(
    r"automatisch (?:generiert|erstellt|gepostet|veröffentlicht)|automatically (?:generated|posted)"
    r"|this is an automated|dies ist eine automatische"
    r"|(?:geplante |scheduled )?(?:wartungsarbeiten|serverwartung|server maintenance|scheduled maintenance)"
    r"|(?:dieses konto|dieser account|this account) (?:ist umgezogen|has moved)",
    re.IGNORECASE,
)


def fold_tags(text: str) -> str:
    """`text` spelt the way Mastodon compares hashtags, and a little more: NFKC (fullwidth letters and
    `＃`), no invisible characters, no accents, no underscores or hyphens between letters, case-folded."""
    text = remove_invisible(unicodedata.normalize("NFKC", text))
    text = "".join(ch for ch in unicodedata.normalize("NFKD", text) if unicodedata.category(ch) != "Mn")
    return _JOINERS.sub("", text).casefold()


def _has_opt_out_tag(text: str) -> bool:
    return bool(_OPT_OUT_TAG.search(fold_tags(text)))


def opted_out(account, accept_missing_indexable: bool = False, _moves: int = 0) -> bool:
    """Whether the author said, by any of the signals above, that their posts are not to be collected, or
    moved to an account that did."""
    moved = account.get("moved")
    if isinstance(moved, dict) and _moves < _MAX_MOVES and opted_out(moved, accept_missing_indexable, _moves + 1):
        return True
    indexable = account.get("indexable")
    if indexable is False or (indexable is None and not accept_missing_indexable):
        return True
    if account.get("discoverable") is False or account.get("noindex") is True:
        return True
    fields = account.get("fields") or []
    profile = [html_to_text(str(account.get("note") or "")), str(account.get("display_name") or "")]
    profile += [html_to_text(str(part)) for f in fields if isinstance(f, dict)
                for part in (f.get("name") or "", f.get("value") or "")]
    return any(_has_opt_out_tag(part) for part in profile)


def _post_opted_out(status) -> bool:
    tags = {fold_tags(str(t.get("name") or "")) for t in status.get("tags") or [] if isinstance(t, dict)}
    return bool(tags & set(OPT_OUT_TAGS)) or _has_opt_out_tag(html_to_text(status.get("content") or ""))


def drop_reason(status, text: str, matcher: KeywordMatcher, accept_missing_indexable: bool = False) -> str | None:
    """First reason to drop `status` (an unwrapped original, `text` its cleaned content), or None to keep it."""
    if status.get("visibility") != "public":
        return NOT_PUBLIC
    account = status.get("account") or {}
    if opted_out(account, accept_missing_indexable) or _post_opted_out(status):
        return OPTED_OUT
    if account.get("suspended") is True:
        return SUSPENDED
    tags = {str(t.get("name") or "").lower() for t in status.get("tags") or [] if isinstance(t, dict)}
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
