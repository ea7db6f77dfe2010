"""Thin entry point: `python eval/lou.py lm|classify|compare ...` == `queerbias lou ...`."""

from queerbias.launched import run

if __name__ == "__main__":
    run("lou")
