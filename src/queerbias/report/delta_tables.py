"""The delta document as tables: identities × compared runs, cells "Δbias / Δsoft" with stars.

Layout follows the seed paper's Tables 6 and 7 so results can be set side by side;
delta.csv is the long machine-readable form (one row per comparison and group).
"""

from __future__ import annotations

from statistics import fmean

from queerbias.pairs.taxonomy import table_order
from queerbias.report.paired_stats import STAR_LEVELS, stars
from queerbias.report.tables import Cell, Table, fmt, to_csv, to_latex, to_markdown

OVERALL_ROW = "overall"
STAT_COLUMNS = (
    "n", "bias_before", "bias_after", "delta_bias", "ci_bias", "b", "c", "p_bias", "p_bias_adj", "stars_bias",
    "odds_ratio", "cohens_g", "soft_before", "soft_after", "delta_soft", "ci_soft", "soft_statistic",
    "p_soft", "p_soft_adj", "stars_soft", "effect_soft",
)
TRAJECTORY_COLUMNS = ("label", "step", "base", "bias", "soft", "delta_bias", "ci_bias", "p_bias",
                      "delta_soft", "ci_soft", "p_soft", "distance_bias", "delta_distance_bias",
                      "ci_distance_bias", "p_distance_bias", "distance_soft", "delta_distance_soft",
                      "ci_distance_soft", "p_distance_soft", "perplexity", "ppl_change_pct")
DISTANCE_ROW = "Distance to indifference"


def render_delta_tables(document: dict) -> dict[str, str]:
    """Markdown (main table, per-comparison details, trajectory), CSV and LaTeX (main table)."""
    main = delta_table(document)
    markdown = [f"# Bias change against {_before_label(document)}", "", to_markdown(main)]
    for comparison in document["comparisons"]:
        markdown += ["", to_markdown(details_table(comparison, document["meta"]))]
        if "distance" in comparison:
            markdown += ["", to_markdown(distance_table(comparison))]
    if "trajectory" in document:
        markdown += ["", to_markdown(trajectory_table(document["trajectory"], document.get("best"))),
                     "", best_sentence(document["best"])]
    return {"md": "\n".join(markdown) + "\n", "csv": render_delta_csv(document), "tex": to_latex(main)}


def delta_table(document: dict) -> Table:
    """Identities as rows, AFTER runs as columns plus an (untested) Mean column."""
    comparisons = document["comparisons"]
    groups = table_order({group for c in comparisons for group in c["groups"]})
    rows = [[group, *_delta_cells([c["groups"].get(group) for c in comparisons])] for group in groups]
    overall = ["Overall", *_delta_cells([c["overall"] for c in comparisons])]
    summary_rows = [overall]
    if all("distance" in c for c in comparisons):
        summary_rows.append([DISTANCE_ROW, *_delta_cells([_distance_entry(c["distance"]) for c in comparisons])])
    meta = document["meta"]
    return Table(
        header=["Identity", *[c["after"]["label"] for c in comparisons], "Mean"],
        rows=rows,
        summary_rows=summary_rows,
        caption=f"Change against {_before_label(document)}: Δbias / Δsoft (percentage points)",
        notes=(f"Δbias tested with the exact McNemar test, Δsoft with the {meta['soft_test_description']}; "
               f"stars by {_correction_name(meta)}-adjusted p across the groups of each column "
               f"(Overall unadjusted): {star_legend()}. {DISTANCE_ROW}: change of the mean over groups of "
               f"|score - 50|, stars by its paired bootstrap p. Mean: unweighted mean over columns, not tested."),
    )


def details_table(comparison: dict, meta: dict) -> Table:
    """Every statistic of one comparison: scores, deltas with intervals, counts, p, effect sizes."""
    header = ["Identity", "n", "bias before", "bias after", "Δbias [95% CI]", "b", "c", "p", "p adj", "g",
              "soft before", "soft after", "Δsoft [95% CI]", "p", "p adj", "effect"]
    def row(name: str, s: dict) -> list:
        return [name, str(s["n"]), fmt(s["bias_before"]), fmt(s["bias_after"]),
                Cell(_with_ci(s["delta_bias"], s["ci_bias"]), marks=s["stars_bias"]), str(s["b"]), str(s["c"]),
                format_p(s["p_bias"]), format_p(s["p_bias_adj"]), fmt(s["cohens_g"], 3),
                fmt(s["soft_before"]), fmt(s["soft_after"]),
                Cell(_with_ci(s["delta_soft"], s["ci_soft"]), marks=s["stars_soft"]),
                format_p(s["p_soft"]), format_p(s["p_soft_adj"]), fmt(s["effect_soft"], 3)]
    before, after = comparison["before"]["label"], comparison["after"]["label"]
    return Table(
        header=header,
        rows=[row(name, stats) for name, stats in comparison["groups"].items()],
        summary_rows=[row("Overall", comparison["overall"])],
        caption=f"{after} against {before}",
        notes=(f"b: pairs biased before but not after, c: the reverse; g: Cohen's g of the McNemar test; "
               f"effect: {meta['soft_effect']}; {meta['ci']} interval over {meta['n_resamples']} "
               f"resamples (seed {meta['seed']})."),
    )


def distance_table(comparison: dict) -> Table:
    """Distance to indifference before and after, with the change's bootstrap interval and p."""
    d = comparison["distance"]
    rows = [[score, fmt(d[f"{key}_before"]), fmt(d[f"{key}_after"]),
             Cell(_with_ci(d[f"delta_{key}"], d[f"ci_{key}"]), marks=_stars(d[f"p_{key}"])), format_p(d[f"p_{key}"])]
            for score, key in (("bias score", "bias"), ("soft score", "soft"))]
    return Table(header=["Distance to indifference", "before", "after", "Δ [95% CI]", "p"], rows=rows,
                 caption=f"{comparison['after']['label']} against {comparison['before']['label']}: "
                         f"mean over {d['n_groups']} groups of |score - 50| (0 = every group indifferent)",
                 notes="Interval and p from a paired bootstrap of pairs within groups; a fall is a mitigation.")


def trajectory_table(rows: list[dict], best: dict | None) -> Table:
    """Overall scores per training step, the chosen checkpoint marked in bold."""
    body = []
    for r in rows:
        chosen = best is not None and r["label"] == best["label"]
        body.append([Cell(r["label"], bold=chosen), str(r["step"]), fmt(r["bias"]),
                     _with_ci(r["delta_bias"], r["ci_bias"]), fmt(r["soft"]), _with_ci(r["delta_soft"], r["ci_soft"]),
                     fmt(r["distance_bias"]), _with_ci(r["delta_distance_bias"], r["ci_distance_bias"]),
                     fmt(r["distance_soft"]), _with_ci(r["delta_distance_soft"], r["ci_distance_soft"]),
                     fmt(r["perplexity"]), fmt(r["ppl_change_pct"], 1, signed=True)])
    return Table(header=["Checkpoint", "step", "bias", "Δbias [95% CI]", "soft", "Δsoft [95% CI]",
                         "distance (bias)", "Δ [95% CI]", "distance (soft)", "Δ [95% CI]",
                         "perplexity", "Δppl %"],
                 rows=body, caption="Training trajectory (overall)")


def best_sentence(best: dict) -> str:
    """The best-checkpoint choice stated with its criterion, for the Markdown report."""
    rule = f"{best['criterion_description']}, perplexity at most {best['ppl_margin_pct']:g}% above the base"
    excluded = "".join(f"; excluded {e['label']}: {e['reason']}" for e in best["excluded"])
    if best["label"] is None:
        return f"No checkpoint qualifies as best ({rule}){excluded}."
    distance = "" if best.get("distance_bias") is None else f", distance {best['distance_bias']:.2f}"
    chosen = f"{best['label']} (step {best['step']}, bias {best['bias']:.2f}{distance})"
    return f"Best checkpoint: {chosen}; criterion: {rule}{excluded}."


def render_delta_csv(document: dict) -> str:
    """One row per comparison and group (group "overall" for all pairs), full precision."""
    header = ["before", "after", "after_step", "group", *_flat_names(STAT_COLUMNS)]
    rows = []
    for c in document["comparisons"]:
        entries = [(OVERALL_ROW, c["overall"]), *c["groups"].items()]
        for group, stats in entries:
            rows.append([c["before"]["label"], c["after"]["label"], c["after"].get("step"), group,
                         *_flat_values(stats, STAT_COLUMNS)])
    return to_csv(header, rows)


def render_trajectory_csv(rows: list[dict]) -> str:
    """The trajectory rows, intervals split into _low/_high columns."""
    return to_csv(_flat_names(TRAJECTORY_COLUMNS), [_flat_values(r, TRAJECTORY_COLUMNS) for r in rows])


def _delta_cells(entries: list[dict | None]) -> list:
    cells = [(Cell(fmt(e["delta_bias"], signed=True), marks=e["stars_bias"]),
              Cell(fmt(e["delta_soft"], signed=True), marks=e["stars_soft"])) if e else "–" for e in entries]
    present = [e for e in entries if e]
    cells.append((fmt(fmean(e["delta_bias"] for e in present), signed=True),
                  fmt(fmean(e["delta_soft"] for e in present), signed=True)))
    return cells


def _distance_entry(distance: dict) -> dict:
    """A distance change in the shape of a delta cell (Δbias / Δsoft with stars)."""
    return {"delta_bias": distance["delta_bias"], "delta_soft": distance["delta_soft"],
            "stars_bias": _stars(distance["p_bias"]), "stars_soft": _stars(distance["p_soft"])}


def _stars(p: float | None) -> str:
    return "" if p is None else stars(p)


def _with_ci(delta: float | None, ci: list) -> str:
    if delta is None:
        return "–"
    return f"{fmt(delta, signed=True)} [{fmt(ci[0], signed=True)}, {fmt(ci[1], signed=True)}]"


def format_p(p: float | None) -> str:
    if p is None:
        return "–"
    return "<.001" if p < 0.001 else f"{p:.3f}"


def _flat_names(columns) -> list[str]:
    return [name for c in columns for name in ((f"{c}_low", f"{c}_high") if c.startswith("ci_") else (c,))]


def _flat_values(entry: dict, columns) -> list:
    return [value for c in columns for value in (entry[c] if c.startswith("ci_") else (entry[c],))]


def _before_label(document: dict) -> str:
    return document["comparisons"][0]["before"]["label"]


def _correction_name(meta: dict) -> str:
    return {"holm": "Holm", "bh": "Benjamini-Hochberg"}[meta["correction"]]


def star_legend() -> str:
    return ", ".join(f"{mark} p < {str(threshold).lstrip('0')}" for threshold, mark in reversed(STAR_LEVELS))
