"""Lou results as tables and Markdown, rendered with `queerbias.report.tables`.

One function per document: the LM-view summary, the classifier-view summary, the
ranking consistency of several classifiers, and the before/after delta document
(whose columns per view are declared in `LAYOUTS`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from queerbias.report.delta_tables import (  # generic; see the note to the lead
    format_p,
    star_legend,
)
from queerbias.report.tables import (
    MISSING,
    Cell,
    CellLike,
    Table,
    fmt,
    to_csv,
    to_latex,
    to_markdown,
)
from queerbias.suites.lou.data import ORIGINAL
from queerbias.suites.lou.lm_view import POOLED

# -- LM view ---------------------------------------------------------------------------

def lm_overview(summary: dict, sentence: bool = False) -> Table:
    """Strategies × scopes: % of instances preferring the reformulation / mean Δ (per token, or summed)."""
    scopes = [*summary["tasks"], POOLED]
    strategies = list(summary[POOLED])

    def view(scope: str, strategy: str) -> dict:
        entry = _scope(summary, scope)[strategy]
        return entry["sentence"] if sentence else entry

    rows = [[s, *[(fmt(view(scope, s)["preference"], 1), fmt(view(scope, s)["mean_delta"], 3, signed=True))
                  for scope in scopes]] for s in strategies]
    unit = "summed over the text (sentence log-likelihood)" if sentence else "per token"
    return Table(header=["Strategy", *scopes], rows=rows,
                 caption=f"Reformulation preferred (%) / mean Δ log-likelihood {unit}",
                 notes="Δ: reformulation minus original (below 0: the original is more likely); a tie counts "
                       "half, so 50% = no preference. Texts equal to "
                       "the original or longer than the model's context are excluded from both figures; "
                       f"'{POOLED}' counts each distinct text pair once (the GermEval tasks share their texts).")


def lm_details(summary: dict, scope: str) -> Table:
    rows = []
    for strategy, e in _scope(summary, scope).items():
        rows.append([strategy, str(e["n"]), str(e["n_identical"]), str(e["n_too_long"]), str(e["n_compared"]),
                     str(e["n_ties"]), _with_ci(e["mean_delta"], e["ci_delta"], 3),
                     _with_ci(e["preference"], e["ci_preference"], 1),
                     _with_ci(e["sentence"]["preference"], e["sentence"]["ci_preference"], 1)])
    return Table(header=["Strategy", "n", "identical", "too long", "compared", "ties", "mean Δ per token [95% CI]",
                         "preferred % per token [95% CI]", "preferred % summed [95% CI]"], rows=rows,
                 caption=f"{scope}: per strategy")


def lm_markdown(summary: dict) -> str:
    meta = summary["meta"]
    lines = [f"# Lou, language-model view: {meta['model']['spec']}", "",
             ("Does the model find gender-fair reformulations as likely as the original German text? "
              f"Length-normalised log-likelihood ({_method(meta)}); 50% preferred = no preference."), "",
             to_markdown(lm_overview(summary)), "",
             to_markdown(lm_overview(summary, sentence=True))]
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
    rows = [[ORIGINAL, str(base["n"]), MISSING, fmt(base["macro_f1"], 1), MISSING, fmt(base["f1_upstream"], 1),
             MISSING, MISSING, fmt(base["certainty"], 3), MISSING]]
    for strategy, e in entries.items():
        if strategy == ORIGINAL:
            continue
        rows.append([strategy, str(e["n"]), str(e["n_identical"]), fmt(e["macro_f1"], 1),
                     _with_ci(e["delta_f1"], e["ci_delta_f1"], 1, signed=True), fmt(e["f1_upstream"], 1),
                     fmt(e["delta_f1_upstream"], 1, signed=True), _with_ci(e["flip_rate"], e["ci_flip_rate"], 1),
                     fmt(e["certainty"], 3), fmt(e["delta_certainty"], 3, signed=True)])
    return Table(header=["Version", "n", "identical", "macro-F1", "ΔF1 [95% CI]", "F1 upstream", "ΔF1 upstream",
                         "flips % [95% CI]", "certainty", "Δcertainty"],
                 rows=rows, caption=task,
                 notes="ΔF1 and Δcertainty against the original; F1 upstream: what the authors' script logs as "
                       "'f1-macro' (binary tasks: the positive class's F1); flips: % of instances whose predicted label "
                       "changes; certainty: mean max-softmax probability. Identical texts are kept (they cannot flip). "
                       "Intervals: paired percentile bootstrap over instances (same resample for both versions).")


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
        pairs = [[f"{p['a']} vs {p['b']}", fmt(p["rho"], 2), format_p(p["p"])] for p in entry["strategy_rankings"]]
        lines += [to_markdown(Table(["Models", "Spearman ρ", "p"], pairs,
                                    caption=f"{task}: strategies ranked by ΔF1")), ""]
        models = [[s, fmt(r["rho"], 2), format_p(r["p"])] for s, r in entry["model_rankings"].items()]
        lines += [to_markdown(Table(["Strategy", "Spearman ρ", "p"], models,
                                    caption=f"{task}: models ranked by F1, original vs. reformulated")), ""]
    lines.append("ρ is undefined (–) for constant scores or fewer than three items; p: exact permutation test up "
                 "to 8 items, else scipy's spearmanr. Model rankings need several models to be informative.")
    return "\n".join(lines) + "\n"


# -- before/after ----------------------------------------------------------------------

@dataclass(frozen=True)
class DeltaLayout:
    """What a view's delta document shows: CSV columns, overview cells and detail columns."""

    columns: tuple[str, ...]  # per-strategy entry keys for delta.csv; ci_* split into _low/_high
    overview: tuple[tuple[str, str, int], ...]  # (value key, stars key, digits) per overview cell part
    caption: str  # {before}: the BEFORE label
    notes: str  # {correction}, {legend}
    details: tuple[tuple[str, Callable[[dict], CellLike]], ...]  # (header, cell of one strategy entry)


def _value(key: str, digits: int, signed: bool = False) -> Callable[[dict], str]:
    return lambda s: fmt(s[key], digits, signed=signed)


def _count(key: str) -> Callable[[dict], str]:
    return lambda s: str(s[key])


def _change(key: str, ci: str, marks: str, digits: int) -> Callable[[dict], Cell]:
    return lambda s: Cell(_with_ci(s[key], s[ci], digits), marks=s[marks])


def _p(key: str) -> Callable[[dict], str]:
    return lambda s: format_p(s[key])


LAYOUTS = {
    "lm": DeltaLayout(
        columns=("n", "delta_before", "delta_after", "change", "ci_change", "statistic", "p_delta", "p_delta_adj",
                 "stars_delta", "effect", "pref_before", "pref_after", "change_pref", "ci_pref", "b", "c", "p_pref",
                 "p_pref_adj", "stars_pref"),
        overview=(("change", "stars_delta", 3), ("change_pref", "stars_pref", 1)),
        caption="Change against {before}: ΔΔ log-likelihood / Δ preferred (pp)",
        notes=("Positive: the reformulation gained on the original (the gap narrowed). Stars: {correction}-adjusted "
               "p across strategies (Wilcoxon / McNemar): {legend}."),
        details=(("n", _count("n")), ("Δ before", _value("delta_before", 3, True)),
                 ("Δ after", _value("delta_after", 3, True)),
                 ("change [95% CI]", _change("change", "ci_change", "stars_delta", 3)),
                 ("p adj", _p("p_delta_adj")), ("r", _value("effect", 2)),
                 ("pref % before", _value("pref_before", 1)), ("pref % after", _value("pref_after", 1)),
                 ("Δpref [95% CI]", _change("change_pref", "ci_pref", "stars_pref", 1)),
                 ("b", _count("b")), ("c", _count("c")), ("p adj", _p("p_pref_adj")))),
    "classifier": DeltaLayout(
        columns=("n", "flip_before", "flip_after", "change_flip", "ci_flip", "b_flip", "c_flip", "p_flip",
                 "p_flip_adj", "stars_flip", "acc_before", "acc_after", "change_acc", "ci_acc", "b_acc", "c_acc",
                 "p_acc", "p_acc_adj", "stars_acc"),
        overview=(("change_flip", "stars_flip", 1), ("change_acc", "stars_acc", 1)),
        caption="Change against {before}: Δ label flips (pp) / Δ accuracy on the reformulation (pp)",
        notes=("Negative flip change: predictions more stable under gender-fair reformulation. Stars: "
               "{correction}-adjusted p across strategies (exact McNemar on the paired flags): {legend}."),
        details=(("n", _count("n")), ("flips % before", _value("flip_before", 1)),
                 ("flips % after", _value("flip_after", 1)),
                 ("Δflips [95% CI]", _change("change_flip", "ci_flip", "stars_flip", 1)),
                 ("b", _count("b_flip")), ("c", _count("c_flip")), ("p adj", _p("p_flip_adj")),
                 ("acc % before", _value("acc_before", 1)), ("acc % after", _value("acc_after", 1)),
                 ("Δacc [95% CI]", _change("change_acc", "ci_acc", "stars_acc", 1)),
                 ("b", _count("b_acc")), ("c", _count("c_acc")), ("p adj", _p("p_acc_adj")))),
}


def _layout(document: dict) -> DeltaLayout:
    return LAYOUTS[document["meta"].get("view", "lm")]


def compare_overview(document: dict) -> Table:
    """Strategies × (comparison, scope): the view's two changes, with stars."""
    layout, comparisons = _layout(document), document["comparisons"]
    scopes = list(comparisons[0]["scopes"])
    header, columns = ["Strategy"], []
    for c in comparisons:
        for scope in scopes:
            header.append(f"{c['after']['label']}: {scope}" if len(comparisons) > 1 else scope)
            columns.append(c["scopes"].get(scope, {}))
    strategies = list(dict.fromkeys(s for column in columns for s in column))
    rows = [[s, *[_change_cell(column.get(s), layout) for column in columns]] for s in strategies]
    return Table(header=header, rows=rows, caption=layout.caption.format(before=comparisons[0]["before"]["label"]),
                 notes=layout.notes.format(correction=document["meta"]["correction"], legend=star_legend()))


def compare_details(comparison: dict, scope: str, layout: DeltaLayout = LAYOUTS["lm"]) -> Table:
    rows = [[strategy, *[cell(s) for _, cell in layout.details]]
            for strategy, s in comparison["scopes"][scope].items()]
    return Table(header=["Strategy", *[name for name, _ in layout.details]], rows=rows,
                 caption=f"{comparison['after']['label']} against {comparison['before']['label']}: {scope}")


def compare_outputs(document: dict) -> dict[str, str]:
    """delta.md, delta.csv (long form, full precision) and delta.tex (the overview)."""
    layout, overview = _layout(document), compare_overview(document)
    lines = [f"# Lou: gender-fair German before and after ({document['comparisons'][0]['before']['label']})", "",
             to_markdown(overview)]
    for comparison in document["comparisons"]:
        for scope in comparison["scopes"]:
            lines += ["", to_markdown(compare_details(comparison, scope, layout))]
    columns = layout.columns
    header = ["before", "after", "scope", "strategy",
              *[n for c in columns for n in ((f"{c}_low", f"{c}_high") if c.startswith("ci_") else (c,))]]
    rows = [[c["before"]["label"], c["after"]["label"], scope, strategy,
             *[v for col in columns for v in (s[col] if col.startswith("ci_") else (s[col],))]]
            for c in document["comparisons"] for scope, entries in c["scopes"].items()
            for strategy, s in entries.items()]
    return {"md": "\n".join(lines) + "\n", "csv": to_csv(header, rows), "tex": to_latex(overview)}


# -- shared ----------------------------------------------------------------------------

def _scope(summary: dict, scope: str) -> dict:
    return summary[POOLED] if scope == POOLED else summary["tasks"][scope]


def _change_cell(s: dict | None, layout: DeltaLayout):
    if not s:
        return MISSING
    return tuple(Cell(fmt(s[key], digits, signed=True), marks=s[marks]) for key, marks, digits in layout.overview)


def _with_ci(value, ci, digits: int, signed: bool = False) -> str:
    if value is None:
        return MISSING
    return f"{fmt(value, digits, signed=signed)} [{fmt(ci[0], digits)}, {fmt(ci[1], digits)}]"


def _meta_lines(meta: dict) -> list[str]:
    data = ", ".join(f"{t['task']} `{t['checksum'][:12]}` (n={t['n']})" for t in meta["data"]["tasks"])
    return [f"- model fingerprint: `{meta['model']['fingerprint']}`",
            f"- data: {data}; {meta['data']['licence']}",
            f"- config: `{meta['config']}`",
            f"- time: {meta['timings']['run_s']:.1f} s"]
