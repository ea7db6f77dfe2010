#!/usr/bin/env python3
"""Crawl Mastodon for the mitigation corpus; same as `queerbias crawl mastodon ARGS`."""

import sys
from pathlib import Path

# Python puts this script's folder first on sys.path, where this file would shadow the
# `mastodon` package (Mastodon.py) that the crawler imports.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from queerbias.crawl.mastodon.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
