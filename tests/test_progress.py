"""What a user sees while long steps run: bars that are live on a terminal and sparse in a log, a
widget in Jupyter where the extra is installed, no transformers bar per model load, and a training
line of the figures that move."""

from __future__ import annotations

import io
import re
from pathlib import Path

from queerbias.progress import LOG_INTERVAL_S, bar
from queerbias.train.callbacks import rate_text, summary_line

REPO = Path(__file__).resolve().parents[1]


def test_bars_are_sparse_in_a_log_and_live_on_a_terminal():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    with bar(total=3, file=io.StringIO()) as logged, bar(total=3, file=Terminal()) as live:
        assert logged.mininterval == LOG_INTERVAL_S and logged.pos == 0  # no cursor moves between bars
        assert live.mininterval < 1


def test_the_notebook_widget_is_an_extra_the_api_docs_name():
    extras = (REPO / "pyproject.toml").read_text().split("[project.optional-dependencies]")[1].split("\n[")[0]
    assert re.search(r'^notebook = \["ipywidgets>=\d', extras, re.M)
    assert "pip install 'queerbias[notebook]'" in (REPO / "docs" / "api.md").read_text()


def test_loading_a_model_draws_no_transformers_bar(tiny_gpt2, capfd):
    from queerbias.models import load_model

    load_model(str(tiny_gpt2))
    assert "Loading weights" not in capfd.readouterr().err


def test_the_training_line_shows_what_moved_and_not_the_margin():
    base = {"benchmarks": {"bias": {"overall": 50.7, "distance": {"bias": 29.7, "soft": 2.0},
                                    "pair_gap": {"margin": 0.7, "mean_abs_d": 4.687, "below_margin": 13.7}}},
            "perplexity": 65.25, "general_perplexity": 30.87}
    now = {"benchmarks": {"bias": {"overall": 44.3, "distance": {"bias": 15.8, "soft": 0.2},
                                   "pair_gap": {"margin": 0.7, "mean_abs_d": 0.919, "below_margin": 47.3}}},
           "perplexity": 54.37, "general_perplexity": 31.11}
    assert summary_line("final (step 24)", base, now) == (
        "final (step 24): bias 50.7 -> 44.3, bias distance 29.7 -> 15.8 (soft 2.0 -> 0.2), bias pair_gap mean_abs_d "
        "4.7 -> 0.9 (below_margin 13.7 -> 47.3), perplexity 65.25 -> 54.37, general perplexity 30.87 -> 31.11 "
        "(base -> now)")
    assert [rate_text(rate) for rate in (0.84, 2.43, 96.4, 1868.4)] == ["0.84", "2.4", "96", "1868"]
