"""Entry script for `queerbias compare`: `python eval/compare.py BEFORE AFTER... --out DIR`."""

import sys

from queerbias.cli import main

if __name__ == "__main__":
    sys.exit(main(["compare", *sys.argv[1:]]))
