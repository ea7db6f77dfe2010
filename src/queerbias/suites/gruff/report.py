"""GRUFF results as tables: summary.md of one run, delta.md/.csv/.tex of a before/after comparison.

Built from the report package's Table renderers, so GRUFF tables read like the
other suites' (Markdown for people, LaTeX for papers, CSV for machines).
"""

from __future__ import annotations

from queerbias.report.delta_tables import (  # generic helpers, see the note to the lead
    format_p,
    star_legend,
)
from queerbias.report.tables import (
    MISSING,
    Cell,
    Table,
    fmt,
    to_csv,
    to_latex,
    to_markdown,
)
from queerbias.suites.gruff.forms import PRONOUN_SETS
from queerbias.suites.gruff.metrics import BREAKDOWNS

TOP_OCCUPATIONS = 5
CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg"}


def setting_label(setting: str) -> str:
    if setting == "none":
        return "no context (agreement)"
    if setting == "d0":
        return "introduction only"
    return f"{setting[1:]} distractor sentence{'s' if setting != 'd1' else ''}"


def _acc(entry: dict | None, se: bool = False) -> str:
    if not entry or entry["accuracy"] is None:
        return MISSING
    return f"{entry['accuracy']:.1f} ± {entry['se']:.1f}" if se else f"{entry['accuracy']:.1f}"


def accuracy_table(settings: dict, breakdown: str) -> Table:
    """Settings as rows, the levels of one breakdown (pronoun set, case, noun system) as columns."""
    levels = BREAKDOWNS[breakdown][1]
    name = {"by_pronoun": "pronoun set", "by_case": "case", "by_system": "noun system"}[breakdown]
    rows = [[setting_label(s), str(f["n"]), *(_acc(f[breakdown][level]) for level in levels), _acc(f, se=True)]
            for s, f in settings.items()]
    return Table(header=["Setting", "n", *levels, "all ± se"], rows=rows,
                 caption=f"Accuracy (%) by {name}", notes="Chance is 25% (four options).")


def distractor_table(settings: dict) -> Table:
    rows = [[setting_label(s), str(f["errors"]), fmt(f["distractor_errors"], 1)]
            for s, f in settings.items() if f["distractor_errors"] is not None]
    return Table(header=["Setting", "errors", "% repeating the distractor's pronoun"], rows=rows,
                 caption="Errors that reuse the other person's pronoun")


def over_resolution_table(over: dict) -> Table:
    """Paper Fig. 6/9-11: per case, the occupations most pulled to er and to sie (context settings)."""
    rows = []
    for case, entries in over.items():
        to_er = sorted((r for r in entries if r["to_er"]), key=lambda r: -r["to_er"])[:TOP_OCCUPATIONS]
        to_sie = sorted((r for r in entries if r["to_sie"]), key=lambda r: -r["to_sie"])[:TOP_OCCUPATIONS]
        for rank in range(max(len(to_er), len(to_sie))):
            rows.append([case, str(rank + 1),
                         f"{to_er[rank]['occupation']} {to_er[rank]['to_er']:.1f}" if rank < len(to_er) else MISSING,
                         f"{to_sie[rank]['occupation']} {to_sie[rank]['to_sie']:.1f}" if rank < len(to_sie) else MISSING])
    return Table(header=["Case", "#", "to er (% of sie referents)", "to sie (% of er referents)"], rows=rows,
                 caption="Occupational over-resolution (paper Sec. 8): er/sie referents, settings with an introduction",
                 notes="Occupations with no such error are not listed.")


def correlation_table(rows: list[dict]) -> Table:
    body = [[f"{r['a']} – {r['b']}", str(r["n"]), fmt(r["rho"], 3), format_p(r["p"]), format_p(r["p_bonferroni"])]
            for r in rows]
    return Table(header=["Cases", "occupations", "Spearman ρ", "p", "p Bonferroni"], rows=body,
                 caption="Correlation of the occupations' stereotype scores between cases (paper Fig. 7)",
                 notes="Stereotype score: % answered sie for er referents minus % answered er for sie referents.")


def pronoun_test_table(rows: list[dict]) -> Table:
    body = [[f"{r['a']} – {r['b']}", str(r["n"]), fmt(r["mean_a"], 1), fmt(r["mean_b"], 1),
             format_p(r["p"]), format_p(r["p_bonferroni"]), fmt(r["effect"], 3)] for r in rows]
    return Table(header=["Pronoun sets a – b", "occupations", "acc a", "acc b", "p", "p Bonferroni", "r"],
                 rows=body, caption="Wilcoxon signed-rank tests between pronoun sets (per-occupation "
                                    "accuracy, context settings)",
                 notes="r: matched-pairs rank-biserial correlation, positive when a is more accurate.")


def summary_markdown(summary: dict) -> str:
    meta = summary["meta"]
    settings = summary["settings"]
    generation = meta["generation"]
    parts = [
        f"# GRUFF pronoun fidelity: {meta['model']['spec']}",
        "",
        (f"Overall accuracy {_acc(summary['overall'], se=True)} % over {summary['overall']['n']} items "
         f"(pairing {generation['pairing']}, {generation['replicates']} replicate(s), seed {generation['seed']}"
         f"{'' if generation['n'] is None else ', n ' + str(generation['n']) + ' per setting'}); "
         f"with an introduction (d0-d5, the paper's Sec. 8 pool): {_acc(summary['introduced'], se=True)} % "
         f"over {summary['introduced']['n']} items."),
        "",
        to_markdown(accuracy_table(settings, "by_pronoun")),
        to_markdown(accuracy_table(settings, "by_case")),
    ]
    if generation["pairing"] != "default":
        parts.append(to_markdown(accuracy_table(settings, "by_system")))
    if any(f["distractor_errors"] is not None for f in settings.values()):
        parts.append(to_markdown(distractor_table(settings)))
    parts += [to_markdown(over_resolution_table(summary["over_resolution"]))]
    if summary["case_correlations"]:
        parts.append(to_markdown(correlation_table(summary["case_correlations"])))
    if summary["pronoun_tests"]:
        parts.append(to_markdown(pronoun_test_table(summary["pronoun_tests"])))
    ties = sum(f["ties"] for f in settings.values())
    parts += [
        f"- model fingerprint: `{meta['model']['fingerprint']}` ({meta['model']['kind']}, {meta['model'].get('dtype')})",
        (f"- templates: `{meta['templates']['checksum']}` ({meta['templates']['n_task']} task, "
         f"{meta['templates']['n_context']} context templates from {meta['templates']['source']})"),
        f"- scoring: {meta['scoring']['method']}; bos {meta['scoring']['bos']} (scoring id `{meta['scoring_id']}`)",
        f"- exact ties (resolved to the first option): {ties}",
        f"- time: {meta['timings']['score_s']:.1f} s scoring ({meta['timings']['items_per_s']:.1f} items/s)",
    ]
    return "\n".join(parts) + "\n"


# -- before/after --------------------------------------------------------------------

def _delta_cell(entry: dict | None) -> Cell | str:
    if not entry:
        return MISSING
    return Cell(fmt(entry["delta"], 1, signed=True), marks=entry["stars"])


def delta_table(document: dict) -> Table:
    """Settings as rows, one column per AFTER run: Δaccuracy (pp) with stars."""
    comparisons = document["comparisons"]
    settings = list(comparisons[0]["settings"])
    rows = [[setting_label(s), *(_delta_cell(c["settings"].get(s)) for c in comparisons)] for s in settings]
    overall = ["Overall", *(_delta_cell(c["overall"]) for c in comparisons)]
    return Table(header=["Setting", *(c["after"]["label"] for c in comparisons)], rows=rows,
                 summary_rows=[overall],
                 caption=f"GRUFF accuracy change against {comparisons[0]['before']['label']} (percentage points)",
                 notes=(f"Exact McNemar test on the paired correct flags; stars by "
                        f"{CORRECTION_NAMES[document['meta']['correction']]}-adjusted p across the settings of each column "
                        f"(Overall unadjusted): {star_legend()}."))


def details_table(comparison: dict) -> Table:
    def row(name: str, s: dict) -> list:
        return [name, str(s["n"]), fmt(s["before"], 1), fmt(s["after"], 1),
                Cell(f"{fmt(s['delta'], 1, signed=True)} [{fmt(s['ci'][0], 1, signed=True)}, "
                     f"{fmt(s['ci'][1], 1, signed=True)}]", marks=s["stars"]),
                str(s["b"]), str(s["c"]), format_p(s["p"]), format_p(s["p_adj"]), fmt(s["cohens_g"], 3)]
    return Table(
        header=["Setting", "n", "acc before", "acc after", "Δ [95% CI]", "b", "c", "p", "p adj", "g"],
        rows=[row(setting_label(s), stats) for s, stats in comparison["settings"].items()],
        summary_rows=[row("Overall", comparison["overall"])],
        caption=f"{comparison['after']['label']} against {comparison['before']['label']}",
        notes="b: items right before and wrong after, c: the reverse; g: Cohen's g; paired percentile "
              "bootstrap interval of the accuracy change.")


def cell_table(comparison: dict) -> Table:
    rows = [[setting_label(s), *(_delta_cell(cells.get(p)) for p in PRONOUN_SETS)]
            for s, cells in comparison["cells"].items()]
    return Table(header=["Setting", *PRONOUN_SETS], rows=rows,
                 caption=f"{comparison['after']['label']}: Δaccuracy (pp) by pronoun set",
                 notes="Stars: McNemar p adjusted across all setting × pronoun-set cells of this comparison.")


def render_compare(document: dict) -> dict[str, str]:
    """delta.md (main, details, per-pronoun cells, model correlations), delta.csv, delta.tex."""
    main = delta_table(document)
    parts = [f"# GRUFF change against {document['comparisons'][0]['before']['label']}", "", to_markdown(main)]
    for comparison in document["comparisons"]:
        parts += [to_markdown(details_table(comparison)), to_markdown(cell_table(comparison))]
    body = [[c["after"]["label"], str(c["model_correlation"]["n"]), fmt(c["model_correlation"]["rho"], 3),
             format_p(c["model_correlation"]["p"]), format_p(c["model_correlation"]["p_bonferroni"])]
            for c in document["comparisons"]]
    parts.append(to_markdown(Table(
        header=["AFTER", "occupations", "Spearman ρ", "p", "p Bonferroni"], rows=body,
        caption="Correlation of the occupations' accusative stereotype scores between BEFORE and each AFTER "
                "(paper Fig. 8)")))
    return {"md": "\n".join(parts), "csv": compare_csv(document), "tex": to_latex(main)}


CSV_COLUMNS = ("n", "before", "after", "delta", "ci", "b", "c", "p", "p_adj", "stars", "odds_ratio", "cohens_g")


def compare_csv(document: dict) -> str:
    """One row per comparison, setting and pronoun set ("all" for the whole setting)."""
    names = {"before": "acc_before", "after": "acc_after", "delta": "delta_acc"}
    header = ["before", "after", "after_step", "setting", "pronoun",
              *(name for c in CSV_COLUMNS for name in ((f"{c}_low", f"{c}_high") if c == "ci" else (names.get(c, c),)))]
    rows = []
    for c in document["comparisons"]:
        entries = [("overall", "all", c["overall"])]
        for setting, stats in c["settings"].items():
            entries.append((setting, "all", stats))
            entries += [(setting, p, c["cells"][setting][p]) for p in PRONOUN_SETS if p in c["cells"][setting]]
        for setting, pronoun_set, s in entries:
            values = [v for col in CSV_COLUMNS for v in (s[col] if col == "ci" else (s[col],))]
            rows.append([c["before"]["label"], c["after"]["label"], c["after"].get("step"), setting, pronoun_set,
                         *values])
    return to_csv(header, rows)

