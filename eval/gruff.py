"""Entry script for `queerbias gruff`: `python eval/gruff.py generate|score|compare ...`."""

from queerbias.launched import run

if __name__ == "__main__":
    run("gruff")
