"""The pair suite's report of several runs: the seed paper's Tables 4 and 5 and the score bars.

Rows are identity groups plus Overall, columns the models plus their Mean; a score
above 50 (preference for the stereotypical sentence) is set in bold.
"""

from __future__ import annotations

from pathlib import Path
from statistics import fmean

from queerbias.pairs.taxonomy import table_order
from queerbias.report.plots import scores_plot
from queerbias.report.tables import (
    MISSING,
    Cell,
    Table,
    fmt,
    to_csv,
    to_latex,
    to_markdown,
)

OVERALL = "Overall"
METRICS = {"bias": "Bias score", "soft": "Soft score"}
NO_PREFERENCE = 50.0


def score_matrix(summaries: list[tuple[str, dict]]) -> tuple[list[str], list[str], dict]:
    """Labels, row names (groups in taxonomy order, Overall last) and scores[metric][label][row] = (score, se, n).

    A row without a score (a group of no pairs) is left out, as if the run lacked it.
    """
    labels = [label for label, _ in summaries]
    scores = {metric: {} for metric in METRICS}
    for label, summary in summaries:
        entries = {**summary["groups"], OVERALL: summary["overall"]}
        for metric in METRICS:
            scores[metric][label] = {
                row: (entry[f"{metric}_score"], entry[f"{metric}_se"], entry["n"])
                for row, entry in entries.items() if entry[f"{metric}_score"] is not None
            }
    groups = table_order({row for by_label in scores["bias"].values() for row in by_label} - {OVERALL})
    return labels, groups + [OVERALL], scores


def render_score_tables(summaries: list[tuple[str, dict]]) -> dict[str, str]:
    """Bias and soft tables of several (label, summary.json dict) runs as "md", "csv" and "tex" text."""
    labels, rows, scores = score_matrix(summaries)
    tables = [_metric_table(metric, labels, rows, scores[metric]) for metric in METRICS]
    csv_rows = []
    for metric in METRICS:
        for row in rows:
            for label in labels:
                if row in scores[metric][label]:
                    score, se, n = scores[metric][label][row]
                    csv_rows.append([metric, row, label, n, score, se, score > NO_PREFERENCE])
            mean = _mean(scores[metric], labels, row)
            csv_rows.append([metric, row, "Mean", None, mean, None, mean > NO_PREFERENCE])
    return {
        "md": "\n".join(to_markdown(table) for table in tables),
        "csv": to_csv(["metric", "group", "model", "n", "score", "se", "above_50"], csv_rows),
        "tex": "\n".join(to_latex(table) for table in tables),
    }


def _metric_table(metric: str, labels: list[str], rows: list[str], scores: dict) -> Table:
    def cells(row: str) -> list:
        values = [scores[label].get(row) for label in labels]
        mean = _mean(scores, labels, row)
        return [row,
                *[Cell(f"{fmt(v[0])} ± {fmt(v[1])}", bold=v[0] > NO_PREFERENCE) if v else MISSING for v in values],
                Cell(fmt(mean), bold=mean > NO_PREFERENCE)]
    return Table(
        header=["Identity", *labels, "Mean"],
        rows=[cells(row) for row in rows[:-1]],
        summary_rows=[cells(rows[-1])],
        caption=f"{METRICS[metric]} (± standard error) per identity group",
        notes="Bold: above 50, i.e. the stereotypical sentence is preferred. Mean: unweighted over models.",
    )


def _mean(scores: dict, labels: list[str], row: str) -> float:
    """Unweighted mean over the models that have the row (every row exists in at least one)."""
    return fmean(scores[label][row][0] for label in labels if row in scores[label])




def report_plot(summaries: list[tuple[str, dict]], path: Path) -> Path:
    """Bias and soft score ± SE per group and run, drawn from 50 (`report.plots.scores_plot`)."""
    return scores_plot(*score_matrix(summaries), path)
