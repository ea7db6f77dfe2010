"""`queerbias crawl SOURCE`: collect raw text for the mitigation corpus.

Each source lives in its own package under `queerbias.crawl` and adds its
subcommand through `register(subparsers)`; this module only lists them.
"""

from __future__ import annotations

from queerbias.crawl.mastodon.cli import register as register_mastodon
from queerbias.crawl.news.cli import register as register_news

SOURCES = (register_mastodon, register_news)


def register(subparsers) -> None:
    help_text = "collect posts and articles for the mitigation corpus"
    p = subparsers.add_parser("crawl", help=help_text, description=help_text.capitalize() + ".")
    sources = p.add_subparsers(dest="source", required=True, metavar="SOURCE")
    for register_source in SOURCES:
        register_source(sources)
