"""Thin entry point: `python eval/run.py SUITE ...` == `queerbias run SUITE ...` (works under accelerate launch)."""

from queerbias.launched import run

if __name__ == "__main__":
    run("run")
