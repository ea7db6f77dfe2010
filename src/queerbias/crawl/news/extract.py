"""Main text of an article page, extracted with trafilatura.

Pages are hostile input: they arrive size-limited from our Fetcher, are parsed by
lxml without network access, and nothing in them is executed; trafilatura drops
scripts, navigation, comments and boilerplate. A page that breaks the parser yields
no text rather than stopping the crawl.
"""

from __future__ import annotations

import logging

import trafilatura
from trafilatura.settings import use_config

log = logging.getLogger(__name__)

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
MAX_TREE_SIZE = 50_000  # elements; larger pages are not articles
# trafilatura drops script and style itself; these hold text no reader of the page sees.
_PRUNE = ["//noscript", "//template", "//*[@hidden]", "//*[@aria-hidden='true']"]
_CONFIG = use_config()
_CONFIG.set("DEFAULT", "MAX_TREE_SIZE", str(MAX_TREE_SIZE))


def extract_article(body: bytes, url: str) -> str | None:
    """Plain text of the article in `body`, paragraphs separated by blank lines, or None."""
    try:
        text = trafilatura.extract(body, url=url, include_comments=False, include_tables=False,
                                   include_images=False, favor_precision=True, config=_CONFIG,
                                   prune_xpath=_PRUNE)
    except Exception as err:  # noqa: BLE001 - hostile input must not stop the crawl
        log.warning("%s: extraction failed: %s", url, err)
        return None
    if not text or not text.strip():
        return None
    paragraphs = [line.strip() for line in text.splitlines() if line.strip()]
    return "\n\n".join(paragraphs)
