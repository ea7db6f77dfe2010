"""Thin entry point: `python eval/gifi.py run|compare ...` == `queerbias gifi run|compare ...`."""

import sys

from queerbias.cli import main

if __name__ == "__main__":
    sys.exit(main(["gifi", *sys.argv[1:]]))
