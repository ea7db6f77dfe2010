"""GRUFF results as report data: the tables of summary.md, the accuracy figure's lines,
the model-correlation table of a comparison and the instances CSV of `gruff generate`.

Tables are `report.tables.Table` objects and the figure is drawn by `report.plots`,
so GRUFF reports read like the other suites'.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from queerbias.report.formatting import format_p
from queerbias.report.plots import line_panels
from queerbias.report.tables import MISSING, Table, fmt
from queerbias.suites.gruff.forms import CASES, PRONOUN_SETS
from queerbias.suites.gruff.generation import SETTINGS, Instance
from queerbias.suites.gruff.metrics import BREAKDOWNS, MIN_REFERENTS


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


def ranking_table(ends: dict) -> Table:
    """Paper Fig. 6/9-11: per case the two ends of the one ranking by stereotype score (% to sie − % to er)."""
    def cell(entry: dict) -> str:
        return (f"{entry['occupation']} {fmt(entry['score'], 1, signed=True)} (to er {fmt(entry['to_er'], 1)}, "
                f"to sie {fmt(entry['to_sie'], 1)})")

    rows = [[case, str(rank + 1), *(cell(entry[end][rank]) if rank < len(entry[end]) else MISSING
                                    for end in ("ihn", "sie"))]
            for case, entry in ends.items() for rank in range(max(len(entry["ihn"]), len(entry["sie"])))]
    excluded = "; ".join(f"{case}: {len(entry['excluded'])}" for case, entry in ends.items() if entry["excluded"])
    minimum = next(iter(ends.values()))["min_referents"] if ends else MIN_REFERENTS
    return Table(header=["Case", "#", "ihn end (most pulled to er)", "sie end (most pulled to sie)"], rows=rows,
                 caption="Occupational over-resolution as one ranking (paper Sec. 8, Fig. 6): er/sie referents, "
                         "settings with an introduction",
                 notes="Score: % of er referents answered sie minus % of sie referents answered er; each end lists up "
                       "to ten occupations from its extreme inward, never one at both ends; a tie at the cut goes to "
                       "the occupation with more referents, then to the name. Occupations with fewer than "
                       f"{minimum} er or sie referents are not ranked" + (f" ({excluded})." if excluded else "."))


def correlation_table(rows: list[dict]) -> Table:
    body = [[f"{r['a']} – {r['b']}", str(r["n"]), fmt(r["rho"], 3), format_p(r["p"]), format_p(r["p_bonferroni"])]
            for r in rows]
    return Table(header=["Cases", "occupations", "Spearman ρ", "p", "p Bonferroni"], rows=body,
                 caption="Correlation of the occupations' stereotype scores between cases (paper Fig. 7)",
                 notes="Stereotype score: % answered sie for er referents minus % answered er for sie referents.")


def pronoun_test_table(rows: list[dict]) -> Table:
    return Table(header=["Pronoun sets a – b", "occupations", "acc a", "acc b", "p", "p Bonferroni", "r"],
                 rows=_test_rows(rows), caption="Wilcoxon signed-rank tests between pronoun sets (per-occupation "
                                                "accuracy, context settings)",
                 notes="r: matched-pairs rank-biserial correlation, positive when a is more accurate.")


def case_test_table(tests: dict[str, list[dict]]) -> Table:
    """Sec. 8: cases of one pronoun set compared (the paper finds no significant difference)."""
    body = [[pronoun, *row] for pronoun, rows in tests.items() for row in _test_rows(rows)]
    return Table(header=["Pronoun set", "Cases a – b", "occupations", "acc a", "acc b", "p", "p Bonferroni", "r"],
                 rows=body, caption="Wilcoxon signed-rank tests between the cases of each pronoun set "
                                    "(paper Sec. 8; per-occupation accuracy, context settings)",
                 notes="Bonferroni within each pronoun set; r: matched-pairs rank-biserial correlation, positive "
                       "when case a is more accurate.")


def _test_rows(rows: list[dict]) -> list[list[str]]:
    return [[f"{r['a']} – {r['b']}", str(r["n"]), fmt(r["mean_a"], 1), fmt(r["mean_b"], 1),
             format_p(r["p"]), format_p(r["p_bonferroni"]), fmt(r["effect"], 3)] for r in rows]


def introduced_table(introduced: dict) -> Table:
    """Sec. 8 and Fig. 5: accuracy per pronoun set (mean ± SD over occupations, and ± binomial SE of the
    pooled items) and per pronoun set and case, settings with an introduction."""
    rows = []
    for pronoun in PRONOUN_SETS:
        entry, spread = introduced["by_pronoun"][pronoun], introduced["by_pronoun"][pronoun]["occupations"]
        sd = "" if spread["sd"] is None else f" ± {fmt(spread['sd'], 1)}"
        rows.append([pronoun, str(entry["n"]), _acc(entry, se=True), f"{fmt(spread['mean'], 1)}{sd}",
                     *(_acc(introduced["by_pronoun_case"][pronoun][case]) for case in CASES)])
    return Table(header=["Pronoun set", "items", "accuracy ± SE", "mean ± SD over occupations", *CASES],
                 rows=rows, caption="Pronoun fidelity with an introduction (d0-d5) by pronoun set and case "
                                    "(paper Sec. 8, Fig. 5)",
                 notes="SE: binomial standard error of the pooled accuracy; SD: over the occupations' accuracies, "
                       "the unit of the Wilcoxon tests (the paper reports mean ± SD without naming its unit).")


def summary_blocks(summary: dict) -> list:
    """The paragraphs and tables of summary.md."""
    settings = summary["settings"]
    generation = summary["meta"]["data"]["generation"]
    n = summary["overall"]["n"]
    blocks = [
        (f"Overall accuracy {_acc(summary['overall'], se=True)} % over {n} distinct items ({summary['n_rows']} rows; "
         f"pairing {generation['pairing']}, {generation['replicates']} replicate(s), seed {generation['seed']}"
         f"{'' if generation['n'] is None else ', n ' + str(generation['n']) + ' per setting'}); with an "
         f"introduction (d0-d5, the paper's Sec. 8 pool): {_acc(summary['introduced'], se=True)} % over "
         f"{summary['introduced']['n']} items. Figures and standard errors count each distinct instance once."),
        accuracy_table(settings, "by_pronoun"),
        accuracy_table(settings, "by_case"),
    ]
    if "replicates" in summary:
        blocks.append(replicate_table(summary["replicates"]))
    if generation["pairing"] != "default":
        blocks.append(accuracy_table(settings, "by_system"))
    if any(f["distractor_errors"] is not None for f in settings.values()):
        blocks.append(distractor_table(settings))
    if "by_pronoun_case" in summary["introduced"]:
        blocks.append(introduced_table(summary["introduced"]))
    if "ranking_ends" in summary:
        blocks.append(ranking_table(summary["ranking_ends"]))
    if summary["case_correlations"]:
        blocks.append(correlation_table(summary["case_correlations"]))
    if summary["pronoun_tests"]:
        blocks.append(pronoun_test_table(summary["pronoun_tests"]))
    if summary.get("case_tests"):
        blocks.append(case_test_table(summary["case_tests"]))
    ties = sum(f["ties"] for f in settings.values())
    blocks.append(f"Exact ties (resolved to the first option): {ties}.")
    return blocks


def replicate_table(replicates: dict) -> Table:
    """Accuracy per replicate set and mean ± SD over the sets, overall and per setting."""
    def row(name: str, entry: dict) -> list:
        spread = fmt(entry["mean"], 1) + ("" if entry["sd"] is None else f" ± {fmt(entry['sd'], 1)}")
        return [name, *[fmt(v, 1) for v in entry["per_set"]], spread]

    sets = replicates["n_sets"]
    return Table(header=["Setting", *[f"set {i + 1}" for i in range(sets)], "mean ± SD"],
                 rows=[row(setting_label(s), e) for s, e in replicates["settings"].items()],
                 summary_rows=[row("Overall", replicates["overall"])],
                 caption="Accuracy (%) per replicate set", notes="As the paper reports its three samples.")


def accuracy_lines(panels: list[tuple[str, list[tuple[str, dict]]]], path: Path) -> Path:
    """Accuracy against the number of distractor sentences, one line per pronoun set and run."""
    def lines(settings: dict) -> dict:
        return {p: [settings[s]["by_pronoun"][p]["accuracy"] if s in settings else None for s in SETTINGS]
                for p in PRONOUN_SETS}

    ticks = ["none" if s == "none" else s[1:] for s in SETTINGS]
    return line_panels(ticks, [(title, [(label, lines(settings)) for label, settings in runs])
                               for title, runs in panels],
                       path, "sentences about the distractor (none: no context)", "accuracy (%)",
                       reference=(100 / len(PRONOUN_SETS), "chance (25%)"), ylim=(0, 100))


def model_correlation_table(document: dict) -> Table:
    """Paper Figs. 8 (accusative) and 12-14 (nominative, dative, genitive): the two models' stereotype
    scores correlated over occupations, per case."""
    figure = {"acc": "Fig. 8", "nom": "Fig. 12", "dat": "Fig. 13", "poss": "Fig. 14, genitive"}
    body = []
    for comparison in document["comparisons"]:
        for key, entry in comparison.items():
            if key == "model_correlation" or key.startswith("model_correlation_"):
                body.append([comparison["after"]["label"], f"{entry['case']} ({figure.get(entry['case'], '')})",
                             str(entry["n"]), fmt(entry["rho"], 3), format_p(entry["p"]),
                             format_p(entry.get("p_bonferroni"))])
    return Table(header=["AFTER", "case", "occupations", "Spearman ρ", "p", "p Bonferroni"], rows=body,
                 caption="Correlation of the occupations' accusative stereotype scores (paper Fig. 8), and of those "
                         "of the other cases (Figs. 12-14), between BEFORE and each AFTER",
                 notes="Bonferroni across the AFTER runs, per case.")


def pronoun_case_change_table(document: dict) -> Table:
    """Paper Fig. 5 for BEFORE and each AFTER: accuracy per pronoun set and case, before → after."""
    body = []
    for comparison in document["comparisons"]:
        figures = comparison.get("fidelity_by_pronoun_case")
        if figures is None:
            continue
        for pronoun in PRONOUN_SETS:
            body.append([comparison["after"]["label"], pronoun,
                         *(f"{_acc(figures['before'][pronoun][case])} → {_acc(figures['after'][pronoun][case])}"
                           for case in CASES)])
    return Table(header=["AFTER", "Pronoun set", *CASES], rows=body,
                 caption="Accuracy (%) by pronoun set and case, settings with an introduction, BEFORE → AFTER "
                         "(paper Fig. 5)", notes="The paired tests per setting and pronoun set are in the main table.")


INSTANCE_COLUMNS = ("replicate", "item_id", "setting", "n_distractors", "occupation", "participant", "case", "system",
                    "target", "distractor_system", "distractor", *(f"text_{p}" for p in PRONOUN_SETS))


def instances_csv(items: Sequence[Instance]) -> str:
    """The instances with every option text, for inspection or other tools (`gruff generate`)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(INSTANCE_COLUMNS)
    for item in items:
        writer.writerow([item.replicate, item.item_id, item.setting, "" if item.n_distractors is None else
                         item.n_distractors, item.occupation, item.participant, item.case, item.system, item.target,
                         item.distractor_system or "", item.distractor or "", *item.texts()])
    return buffer.getvalue()
