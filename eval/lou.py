"""Thin entry point: `python eval/lou.py lm|classify|compare ...` == `queerbias lou ...`."""

import sys

from queerbias.cli import main

if __name__ == "__main__":
    sys.exit(main(["lou", *sys.argv[1:]]))
