"""The pair suite's report of several runs: the seed paper's Tables 4 and 5 and the score bars.

Rows are identity groups plus Overall, columns the models plus their Mean; a score
above 50 (preference for the stereotypical sentence) is set in bold.
"""

from __future__ import annotations

from pathlib import Path
from statistics import fmean

import numpy as np

from queerbias.report.plots import NEUTRAL, PALETTE, new_figure, save_figure
from queerbias.report.tables import MISSING, Cell, Table, fmt, to_csv, to_latex, to_markdown
from queerbias.suites.companions import ReportHooks
from queerbias.text.taxonomy import table_order

SCORES_PX = (1100, 800)
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
    """Bias and soft score ± SE per group and run, drawn from 50 (`scores_plot`)."""
    return scores_plot(*score_matrix(summaries), path)


class PairReport(ReportHooks):
    """`queerbias report` of pair runs: the seed paper's bias and soft tables (Tables 4 and 5) and the bars."""

    def tables(self, runs) -> dict[str, str]:
        return render_score_tables([(run.label, run.summary) for run in runs])

    def plot(self, runs, path):
        return report_plot([(run.label, run.summary) for run in runs], path)


def scores_plot(labels: list[str], groups: list[str], scores: dict, path: Path) -> Path:
    """Grouped bars of bias and soft score ± SE per group and model, drawn from 50 (no preference).

    Bars start at 50 so the direction of a preference is read at a glance and the axis
    zooms on the range the scores actually span.

    `scores[metric][label][group]` is a (score, se, ...) tuple or absent; metric is "bias" or "soft".
    """
    fig, axes = new_figure(SCORES_PX, nrows=2, sharex=True)
    x = np.arange(len(groups))
    width = 0.8 / len(labels)
    for ax, metric in zip(axes, ("bias", "soft"), strict=True):
        for index, label in enumerate(labels):
            values = np.array([scores[metric][label].get(group, (np.nan, np.nan))[:2] for group in groups],
                              dtype=float)
            ax.bar(x - 0.4 + width * (index + 0.5), values[:, 0] - 50, width, bottom=50, yerr=values[:, 1],
                   color=PALETTE[index % len(PALETTE)], label=label if metric == "bias" else None,
                   capsize=2, error_kw={"linewidth": 0.8})
        ax.axhline(50, color=NEUTRAL, linewidth=1)
        ax.set_ylabel(f"{metric} score (50 = no preference)")
        ax.grid(axis="y", alpha=0.3)
    fig.legend(loc="outside lower center", ncols=min(len(labels), 6), fontsize="small")
    axes[1].set_xticks(x, groups, rotation=30, ha="right")
    axes[1].set_xlabel("Identity group")
    fig.suptitle("Bias and soft score per identity group (± standard error)")
    return save_figure(fig, path)
