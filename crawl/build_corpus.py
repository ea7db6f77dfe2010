#!/usr/bin/env python3
"""Build a training corpus; same as `queerbias corpus build ARGS`."""

import sys

from queerbias.cli import main

if __name__ == "__main__":
    sys.exit(main(["corpus", "build", *sys.argv[1:]]))
