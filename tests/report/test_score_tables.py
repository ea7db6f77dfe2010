"""Multi-model score tables (bias/soft ± SE, Mean, bold above 50) and `queerbias report`."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from queerbias.report.tables import Cell, Table, to_latex, to_markdown
from queerbias.suites.pairs.paper_tables import render_score_tables

from .score_dirs import png_size


def summary(groups: dict[str, tuple[float, float]], overall: tuple[float, float]) -> dict:
    """A summary.json dict whose bias and soft scores are both `score` (se as given)."""
    def block(score, se):
        return {"n": 20, "n_neutral": 0, "bias_score": score, "bias_se": se, "soft_score": score - 1, "soft_se": se}
    return {"overall": block(*overall), "groups": {g: block(*v) for g, v in groups.items()}, "meta": {}}


SUMMARIES = [
    ("gemma_3", summary({"gay": (62.5, 3.1), "trans": (48.0, 2.0)}, (55.0, 1.5))),
    ("llama&co", summary({"gay": (40.0, 3.0)}, (45.0, 2.5))),
]


def test_markdown_cells_mean_and_bold():
    md = render_score_tables(SUMMARIES)["md"]
    assert "| Identity | gemma\\_3 | llama&co | Mean |" in md
    assert "| gay | **62.50 ± 3.10** | 40.00 ± 3.00 | **51.25** |" in md
    assert "| trans | 48.00 ± 2.00 | – | 48.00 |" in md
    assert "| Overall | **55.00 ± 1.50** | 45.00 ± 2.50 | 50.00 |" in md  # 50 is not above 50
    assert "| gay | **61.50 ± 3.10** | 39.00 ± 3.00 | **50.25** |" in md  # soft table


def test_group_without_pairs_is_left_out():
    empty = {"n": 0, "n_neutral": 0, "bias_score": None, "bias_se": None, "soft_score": None, "soft_se": None}
    summaries = [("m", summary({"gay": (52.0, 1.0)}, (52.0, 1.0)))]
    summaries[0][1]["groups"]["trans"] = empty
    assert "trans" not in render_score_tables(summaries)["md"]


def test_csv_holds_every_value():
    table = pd.read_csv(io.StringIO(render_score_tables(SUMMARIES)["csv"]))
    row = table[(table.metric == "bias") & (table.group == "gay") & (table.model == "gemma_3")].iloc[0]
    assert (row.score, row.se, row.n, row.above_50) == (62.5, 3.1, 20, True)
    mean = table[(table.metric == "soft") & (table.group == "Overall") & (table.model == "Mean")].iloc[0]
    assert mean.score == pytest.approx(49.0) and not mean.above_50
    assert len(table) == 2 * 3 * 3 - 2  # llama has no trans row in either metric


def test_latex_is_booktabs_and_escaped():
    tex = render_score_tables(SUMMARIES)["tex"]
    assert tex.count(r"\toprule") == 2 and tex.count(r"\bottomrule") == 2
    assert r"Identity & gemma\_3 & llama\&co & Mean \\" in tex
    assert r"\textbf{62.50 $\pm$ 1.50}" not in tex and r"\textbf{62.50 $\pm$ 3.10}" in tex


def test_generic_renderers_escape_and_mark():
    table = Table(header=["Group", "Δ"], rows=[["a_b|c", (Cell("-1.20", marks="**"), Cell("50%", bold=True))]],
                  summary_rows=[["Overall", "~^#$\\{}"]], caption="x & y")
    md = to_markdown(table)
    assert "| a\\_b\\|c | -1.20\\*\\* / **50%** |" in md and md.startswith("**x & y**")
    tex = to_latex(table)
    assert r"a\_b|c & $-$1.20$^{**}$ / \textbf{50\%} \\" in tex
    assert r"\textasciitilde{}\textasciicircum{}\#\$\textbackslash{}\{\}" in tex
    assert r"Group & $\Delta$ \\" in tex and r"\caption{x \& y}" in tex


def test_cli_report(tmp_path, cli, capsys):
    from .score_dirs import make_pairs, write_score_dir

    a = write_score_dir(tmp_path / "base", make_pairs(seed=1))
    b = write_score_dir(tmp_path / "tuned", make_pairs(seed=2))
    out = tmp_path / "report"
    assert cli(["report", str(a), f"DPO={b}", "--out", str(out)]) == 0
    assert "| Identity | base | DPO | Mean |" in (out / "scores.md").read_text()
    assert (out / "scores.tex").read_text().count(r"\begin{tabular}") == 2
    assert png_size(out / "scores.png") == (1100, 800)
    assert "| Overall |" in capsys.readouterr().out
