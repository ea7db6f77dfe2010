"""Thin entry point: `python eval/run.py SUITE ...` == `queerbias run SUITE ...` (works under accelerate launch)."""

import sys

from queerbias.cli import main

if __name__ == "__main__":
    sys.exit(main(["run", *sys.argv[1:]]))
