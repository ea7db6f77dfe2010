"""Entry script for `queerbias gruff`: `python eval/gruff.py generate|score|compare ...`."""

import sys

from queerbias.cli import main

if __name__ == "__main__":
    sys.exit(main(["gruff", *sys.argv[1:]]))
