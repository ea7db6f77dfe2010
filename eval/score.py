"""Thin entry point: `python eval/score.py ...` == `queerbias score ...` (works under accelerate launch)."""

import sys

from queerbias.cli import main

if __name__ == "__main__":
    sys.exit(main(["score", *sys.argv[1:]]))
