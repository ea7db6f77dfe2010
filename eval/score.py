"""Thin entry point: `python eval/score.py ...` == `queerbias score ...` (works under accelerate launch)."""

from queerbias.launched import run

if __name__ == "__main__":
    run("score")
