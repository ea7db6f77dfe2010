#!/usr/bin/env python3
"""Crawl news feeds for the mitigation corpus; same as `queerbias crawl news ARGS`."""

import sys

from queerbias.cli import main

if __name__ == "__main__":
    sys.exit(main(["crawl", "news", *sys.argv[1:]]))
