"""Lou results as tables and Markdown, rendered with `queerbias.report.tables`.

One function per document: the LM-view summary, the classifier-view summary, the
ranking consistency of several classifiers, and the before/after delta document.
"""

from __future__ import annotations

from queerbias.report.delta_tables import (  # generic; see the note to the lead
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
from queerbias.suites.lou.data import ORIGINAL
from queerbias.suites.lou.lm_view import POOLED

COMPARE_COLUMNS = ("n", "delta_before", "delta_after", "change", "ci_change", "statistic", "p_delta",
                   "p_delta_adj", "stars_delta", "effect", "pref_before", "pref_after", "change_pref",
                   "ci_pref", "b", "c", "p_pref", "p_pref_adj", "stars_pref")


# -- LM view ---------------------------------------------------------------------------

def lm_overview(summary: dict) -> Table:
    """Strategies × scopes: % of instances preferring the reformulation / mean Δ."""
    scopes = [*summary["tasks"], POOLED]
    strategies = list(summary[POOLED])
    rows = [[s, *[(fmt(_scope(summary, scope)[s]["preference"], 1), fmt(_scope(summary, scope)[s]["mean_delta"],
                                                                          3, signed=True))
                  for scope in scopes]] for s in strategies]
    return Table(header=["Strategy", *scopes], rows=rows,
                 caption="Reformulation preferred (%) / mean Δ log-likelihood per token",
                 notes="Δ: reformulation minus original (below 0: the original is more likely). Texts equal to "
                       "the original or longer than the model's context are excluded from both figures; "
                       f"'{POOLED}' counts each distinct text pair once (the GermEval tasks share their texts).")


def lm_details(summary: dict, scope: str) -> Table:
    rows = []
    for strategy, e in _scope(summary, scope).items():
        rows.append([strategy, str(e["n"]), str(e["n_identical"]), str(e["n_too_long"]), str(e["n_compared"]),
                     _with_ci(e["mean_delta"], e["ci_delta"], 3), _with_ci(e["preference"], e["ci_preference"], 1)])
    return Table(header=["Strategy", "n", "identical", "too long", "compared", "mean Δ [95% CI]",
                         "preferred % [95% CI]"], rows=rows, caption=f"{scope}: per strategy")


def lm_markdown(summary: dict) -> str:
    meta = summary["meta"]
    lines = [f"# Lou, language-model view: {meta['model']['spec']}", "",
             ("Does the model find gender-fair reformulations as likely as the original German text? "
              f"Length-normalised log-likelihood ({_method(meta)}); 50% preferred = no preference."), "",
             to_markdown(lm_overview(summary))]
    for scope in [*summary["tasks"], POOLED]:
        lines += ["", to_markdown(lm_details(summary, scope))]
    lines += ["", *_meta_lines(meta)]
    return "\n".join(lines) + "\n"


def _method(meta: dict) -> str:
    if meta["model"]["kind"] == "masked":
        return "masked LM: mean pseudo-log-likelihood, within_word_l2r"
    return "causal LM: mean token log-probability given BOS"


# -- classifier view -------------------------------------------------------------------

def classifier_table(summary: dict, task: str) -> Table:
    entries = summary["tasks"][task]
    base = entries[ORIGINAL]
    rows = [[ORIGINAL, str(base["n"]), MISSING, fmt(base["macro_f1"], 1), MISSING, MISSING,
             fmt(base["certainty"], 3), MISSING]]
    for strategy, e in entries.items():
        if strategy == ORIGINAL:
            continue
        rows.append([strategy, str(e["n"]), str(e["n_identical"]), fmt(e["macro_f1"], 1),
                     fmt(e["delta_f1"], 1, signed=True), fmt(e["flip_rate"], 1), fmt(e["certainty"], 3),
                     fmt(e["delta_certainty"], 3, signed=True)])
    return Table(header=["Version", "n", "identical", "macro-F1", "ΔF1", "flips %", "certainty", "Δcertainty"],
                 rows=rows, caption=task,
                 notes="ΔF1 and Δcertainty against the original; flips: % of instances whose predicted label "
                       "changes; certainty: mean max-softmax probability. Identical texts are kept (they cannot flip).")


def classifier_markdown(summary: dict) -> str:
    meta = summary["meta"]
    lines = [f"# Lou, classifier view: {meta['model']['spec']}", "",
             ("Predictions on the original texts and on each gender-fair reformulation "
              "(Waldis et al. 2024, Figures 3-4)."), ""]
    for task in summary["tasks"]:
        lines += [to_markdown(classifier_table(summary, task)), ""]
    lines += _meta_lines(meta)
    return "\n".join(lines) + "\n"


def consistency_markdown(document: dict) -> str:
    """Agreement of several classifiers: strategy rankings (pairwise) and model rankings (per strategy)."""
    lines = ["# Lou, ranking consistency across classifiers", ""]
    for task, entry in document["tasks"].items():
        pairs = [[f"{p['a']} vs {p['b']}", fmt(p["rho"], 2)] for p in entry["strategy_rankings"]]
        lines += [to_markdown(Table(["Models", "Spearman ρ"], pairs, caption=f"{task}: strategies ranked by ΔF1")), ""]
        models = [[s, fmt(rho, 2)] for s, rho in entry["model_rankings"].items()]
        lines += [to_markdown(Table(["Strategy", "Spearman ρ"], models,
                                    caption=f"{task}: models ranked by F1, original vs. reformulated")), ""]
    lines.append("ρ is undefined (–) for constant scores; model rankings need at least three models to be informative.")
    return "\n".join(lines) + "\n"


# -- before/after ----------------------------------------------------------------------

def compare_overview(document: dict) -> Table:
    """Strategies × (comparison, scope): change of Δ / change of preference, with stars."""
    comparisons = document["comparisons"]
    scopes = list(comparisons[0]["scopes"])
    header, columns = ["Strategy"], []
    for c in comparisons:
        for scope in scopes:
            header.append(f"{c['after']['label']}: {scope}" if len(comparisons) > 1 else scope)
            columns.append(c["scopes"].get(scope, {}))
    strategies = list(dict.fromkeys(s for column in columns for s in column))
    rows = [[s, *[_change_cell(column.get(s)) for column in columns]] for s in strategies]
    return Table(header=header, rows=rows,
                 caption=f"Change against {comparisons[0]['before']['label']}: ΔΔ log-likelihood / Δ preferred (pp)",
                 notes=("Positive: the reformulation gained on the original (the gap narrowed). "
                        f"Stars: {document['meta']['correction']}-adjusted p across strategies "
                        f"(Wilcoxon / McNemar): {star_legend()}."))


def compare_details(comparison: dict, scope: str) -> Table:
    rows = []
    for strategy, s in comparison["scopes"][scope].items():
        rows.append([strategy, str(s["n"]), fmt(s["delta_before"], 3, signed=True), fmt(s["delta_after"], 3, signed=True),
                     Cell(_with_ci(s["change"], s["ci_change"], 3), marks=s["stars_delta"]), format_p(s["p_delta_adj"]),
                     fmt(s["effect"], 2), fmt(s["pref_before"], 1), fmt(s["pref_after"], 1),
                     Cell(_with_ci(s["change_pref"], s["ci_pref"], 1), marks=s["stars_pref"]),
                     str(s["b"]), str(s["c"]), format_p(s["p_pref_adj"])])
    return Table(header=["Strategy", "n", "Δ before", "Δ after", "change [95% CI]", "p adj", "r",
                         "pref % before", "pref % after", "Δpref [95% CI]", "b", "c", "p adj"],
                 rows=rows, caption=f"{comparison['after']['label']} against {comparison['before']['label']}: {scope}")


def compare_outputs(document: dict) -> dict[str, str]:
    """delta.md, delta.csv (long form, full precision) and delta.tex (the overview)."""
    overview = compare_overview(document)
    lines = [f"# Lou: gender-fair German before and after ({document['comparisons'][0]['before']['label']})", "",
             to_markdown(overview)]
    for comparison in document["comparisons"]:
        for scope in comparison["scopes"]:
            lines += ["", to_markdown(compare_details(comparison, scope))]
    header = ["before", "after", "scope", "strategy",
              *[n for c in COMPARE_COLUMNS for n in ((f"{c}_low", f"{c}_high") if c.startswith("ci_") else (c,))]]
    rows = [[c["before"]["label"], c["after"]["label"], scope, strategy,
             *[v for col in COMPARE_COLUMNS for v in (s[col] if col.startswith("ci_") else (s[col],))]]
            for c in document["comparisons"] for scope, entries in c["scopes"].items()
            for strategy, s in entries.items()]
    return {"md": "\n".join(lines) + "\n", "csv": to_csv(header, rows), "tex": to_latex(overview)}


# -- shared ----------------------------------------------------------------------------

def _scope(summary: dict, scope: str) -> dict:
    return summary[POOLED] if scope == POOLED else summary["tasks"][scope]


def _change_cell(s: dict | None):
    if not s:
        return MISSING
    return (Cell(fmt(s["change"], 3, signed=True), marks=s["stars_delta"]),
            Cell(fmt(s["change_pref"], 1, signed=True), marks=s["stars_pref"]))


def _with_ci(value, ci, digits: int) -> str:
    if value is None:
        return MISSING
    return f"{fmt(value, digits)} [{fmt(ci[0], digits)}, {fmt(ci[1], digits)}]"


def _meta_lines(meta: dict) -> list[str]:
    data = ", ".join(f"{t['task']} `{t['checksum'][:12]}` (n={t['n']})" for t in meta["data"]["tasks"])
    return [f"- model fingerprint: `{meta['model']['fingerprint']}`",
            f"- data: {data}; {meta['data']['licence']}",
            f"- config: `{meta['config']}`",
            f"- time: {meta['timings']['run_s']:.1f} s"]
