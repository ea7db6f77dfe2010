"""`queerbias crawl SOURCE`: collect raw text for the mitigation corpus.

Each source lives in its own package under `queerbias.crawl` and adds its
subcommand through `register(subparsers)`; this module only lists them (and
`test-server`, the local Mastodon instance to try the crawler on).
"""

from __future__ import annotations

from queerbias.crawl.mastodon.cli import register as register_mastodon
from queerbias.crawl.mastodon.testserver import register as register_test_server
from queerbias.crawl.news.cli import register as register_news

SOURCES = (register_mastodon, register_news, register_test_server)


def register(subparsers) -> None:
    help_text = "collect posts and articles for the mitigation corpus"
    p = subparsers.add_parser("crawl", help=help_text, description=help_text.capitalize() + ".")
    sources = p.add_subparsers(dest="source", required=True, metavar="SOURCE")
    for register_source in SOURCES:
        register_source(sources)
