"""Thin entry point: `python eval/gifi.py run|compare ...` == `queerbias gifi run|compare ...`."""

from queerbias.launched import run

if __name__ == "__main__":
    run("gifi")
