"""Entry script for `queerbias compare`: `python eval/compare.py BEFORE AFTER... --out DIR`."""

from queerbias.launched import run

if __name__ == "__main__":
    run("compare")
