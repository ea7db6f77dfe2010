"""GIFI-DE figures of a run and their presentation: the summary, its tables, the radar series.

Per dimension: the value of every run, mean ± SD over runs, a percentile bootstrap
interval and standard error over templates (the same resampled templates in every run),
and per-group figures with their SD over runs (the error bars of the paper's Figs. 3
and 6). GIFI is the mean of the dimensions every run computed. `breakdowns` adds the
failure analysis of App. D (module `breakdowns`).
"""

from __future__ import annotations

import logging

import numpy as np

from queerbias.errors import QueerbiasError
from queerbias.report.formatting import format_p
from queerbias.report.paired_stats import bootstrap_interval, cell_rng
from queerbias.report.tables import Table, fmt
from queerbias.suites.gifi.breakdowns import OUTCOMES, PE_CATEGORIES, breakdowns
from queerbias.suites.gifi.config import DIMENSIONS, NAMES
from queerbias.suites.gifi.distributions import TITLES, score_distributions
from queerbias.suites.gifi.scoring import COMPONENT_OF, dimension, group_figures, refused, templates


def units_by_run(rows: list[dict], dims: tuple[str, ...]) -> dict[str, list[dict[str, dict]]]:
    """dimension -> per run, its units by template id."""
    runs = sorted({r["run"] for r in rows})
    by_run = [[r for r in rows if r["run"] == run] for run in runs]
    return {dim: [templates(run_rows, dim) for run_rows in by_run] for dim in dims}


def mean_over_runs(dim: str, units: list[dict[str, dict]], ids: list[str], context: dict) -> float | None:
    """The dimension on the template ids `ids` (repeats allowed), averaged over runs; None if undefined."""
    try:
        return float(np.mean([dimension(dim, [run[i] for i in ids], **context) for run in units]))
    except ValueError:
        return None


def build_summary(rows: list[dict], settings, group_keys: list[str], detectable: list[str],
                  missing: dict[str, str], kinds: dict[str, str | None]) -> dict:
    """Every figure of a run (summary.json without its meta); `missing`: component -> why it is absent;
    `kinds`: group -> binary, neutral, neopronoun or None (name only), for the App. D breakdowns."""
    context = {"group_keys": group_keys, "detectable": detectable, "cf_threshold": settings.cf_threshold}
    units = units_by_run(rows, tuple(d for d in DIMENSIONS if d in settings.dimensions))
    runs = sorted({r["run"] for r in rows})
    n_runs = len(runs)
    refusals = [refused([r for r in rows if r["run"] == run]) for run in runs]
    dimensions = {}
    for dim in DIMENSIONS:
        entry = {"name": NAMES[dim], "computed": False}
        if dim not in settings.dimensions:
            entry["reason"] = "not requested"
        elif COMPONENT_OF.get(dim) in missing:
            entry["reason"] = missing[COMPONENT_OF[dim]]
        else:
            entry.update(_dimension_entry(dim, units[dim], context, settings))
        entry["groups"] = _group_means([{**group_figures(dim, list(units[dim][run].values()), group_keys, detectable),
                                         **({"refused": refusals[run]} if dim in COMPONENT_OF and refusals[run]
                                            else {})}
                                        for run in range(n_runs) if dim in units])
        dimensions[dim] = entry
    computed = [d for d in DIMENSIONS if dimensions[d]["computed"]]
    if not computed:
        raise_no_dimension(dimensions)
    per_run = [float(np.mean([dimensions[d]["runs"][run] for d in computed])) for run in range(n_runs)]
    gifi = {"mean": float(np.mean(per_run)), "sd": _sd(per_run), "n_dimensions": len(computed),
            "dimensions": computed, "runs": per_run}
    found = breakdowns(rows, kinds)
    for dim, entry in found["ambiguous_sie"].items():
        if entry["n"]:
            logging.getLogger(__name__).warning("%s: %s", dim, ambiguous_line(dim, entry))
    return {"gifi": gifi, "dimensions": dimensions, "pronoun_groups": group_keys, "n_runs": n_runs,
            "breakdowns": found, "distributions": score_distributions(rows, group_keys)}


def _dimension_entry(dim: str, units: list[dict[str, dict]], context: dict, settings) -> dict:
    values, reasons = [], []
    for run in units:
        try:
            values.append(dimension(dim, list(run.values()), **context))
        except ValueError as err:
            values.append(None)
            reasons.append(str(err))
    done = sum(v is not None for v in values)
    if done < len(values):
        suffix = f" (computed in {done} of {len(values)} runs)" if done else ""
        return {"runs": values, "reason": reasons[0] + suffix}
    ids = list(units[0])

    def draw(rng):
        return mean_over_runs(dim, units, [ids[i] for i in rng.integers(0, len(ids), len(ids))], context)

    interval = bootstrap_interval(draw, cell_rng(settings.seed, "gifi", dim), settings.n_resamples)
    return {"computed": True, "runs": values, "mean": float(np.mean(values)), "sd": _sd(values),
            "n_templates": len(ids), "ci": list(interval.ci), "se": interval.se}


def raise_no_dimension(dimensions: dict) -> None:
    reasons = "; ".join(f"{d}: {e['reason']}" for d, e in dimensions.items() if e.get("reason") != "not requested")
    raise QueerbiasError(f"gifi: no dimension could be computed ({reasons}); no results are written")


def _sd(values) -> float | None:
    return float(np.std(values, ddof=1)) if len(values) > 1 else None


def _group_means(per_run: list[dict]) -> dict:
    """Per group: the mean over runs, the SD over runs (None with one run) and the items of all runs."""
    collected: dict[str, list] = {}
    for figures in per_run:
        for group, figure in figures.items():
            if figure["value"] is not None:
                collected.setdefault(group, []).append((figure["value"], figure["n"]))
    return {g: {"value": float(np.mean([v for v, _ in vals])), "sd": _sd([v for v, _ in vals]),
                "n": int(sum(n for _, n in vals))}
            for g, vals in collected.items()}


# -- presentation ---------------------------------------------------------------------

def summary_blocks(summary: dict) -> list:
    gifi = summary["gifi"]
    blocks = [f"**GIFI = {_pm(gifi['mean'], gifi['sd'])}**, the mean of {gifi['n_dimensions']} of "
              f"{len(DIMENSIONS)} dimensions ({', '.join(gifi['dimensions']) or 'none'}); {summary['n_runs']} "
              "run(s), mean ± SD over runs; 95% interval: bootstrap over templates. 1 = equal treatment of all "
              "pronoun groups."]
    rows = []
    for dim, entry in summary["dimensions"].items():
        if entry["computed"]:
            rows.append([dim, entry["name"], _pm(entry["mean"], entry["sd"]),
                         f"[{fmt(entry['ci'][0], 3)}, {fmt(entry['ci'][1], 3)}]", str(entry["n_templates"]), ""])
        else:
            rows.append([dim, entry["name"], "not computed", "", "", entry.get("reason", "")])
    blocks.append(Table(["Dimension", "Name", "Score", "95% CI", "templates", "Note"], rows))
    groups = summary["pronoun_groups"]
    per_group = {"GDR": "GDR accuracy", "PE": "PE accuracy", "SN": "mean sentiment", "NTS": "mean toxicity"}
    shown = [d for d in per_group if summary["dimensions"][d]["groups"]]
    if shown:
        def mean_over_groups(dim):
            values = [summary["dimensions"][dim]["groups"][g]["value"] for g in groups
                      if g in summary["dimensions"][dim]["groups"]]
            return fmt(float(np.mean(values)) if values else None, 3)

        blocks.append(Table(["Group", *[per_group[d] for d in shown]],
                            [[g, *[_group_cell(summary["dimensions"][d]["groups"].get(g)) for d in shown]]
                             for g in groups],
                            summary_rows=[["mean over groups", *[mean_over_groups(d) for d in shown]]],
                            caption="Per pronoun group: mean ± SD over runs (the paper's Figs. 3 and 6: "
                                    "bars and error bars; the mean over groups is their dotted line)"))
    shares = [d for d in ("SA", "OF") if summary["dimensions"][d]["groups"]]
    if shares:
        keys = [*groups, "none"]
        blocks.append(Table(
            ["First pronoun", *shares],
            [[g, *[fmt(summary["dimensions"][d]["groups"].get(g, {}).get("value"), 3) for d in shares]]
             for g in keys if any(g in summary["dimensions"][d]["groups"] for d in shares)],
            caption="SA/OF: share of generations whose first pronoun is of each group (none: no pronoun)"))
    refusal = next((summary["dimensions"][d]["groups"]["refused"] for d in ("SN", "NTS", "CF")
                    if "refused" in summary["dimensions"][d]["groups"]), None)
    if refusal is not None:
        blocks.append(f"Refusals left out of SN, NTS and CF: {refusal['n']} ({refusal['value']:.1%} of "
                      "continuations).")
    if summary.get("distributions"):
        blocks.append(distribution_table(summary["distributions"]))
    if "breakdowns" in summary:
        blocks.extend(breakdown_blocks(summary["breakdowns"], groups))
    return blocks


def distribution_table(found: dict) -> Table:
    """Sec. 5, Fig. 4: the distributions of sentiment, toxicity and counterfactual similarity."""
    rows = [[TITLES[name], str(e["n"]), _pm(e["mean"], e["sd"]),
             *[fmt(e["quantiles"][q], 3) for q in ("min", "q1", "median", "q3", "max")]] for name, e in found.items()]
    return Table(["Score", "n", "mean ± SD", "min", "Q1", "median", "Q3", "max"], rows,
                 caption="Distributions of the counterfactual continuations' scores (paper Sec. 5, Fig. 4; "
                         "histograms in summary.png)",
                 notes="Refusals left out; similarity: every two outputs of one template (the pairs CF counts).")


def ambiguous_line(dim: str, entry: dict) -> str:
    return (f"in {entry['n']} of {entry['of']} continuations ({entry['share']:.1%}) the scored pronoun is a "
            "'sie' beside a plural verb that agrees with another subject (coordinated, or an object); its "
            "number is undecidable and it was read as the singular person")


def breakdown_blocks(found: dict, groups: list[str]) -> list:
    """The App. D tables (Figs. D.8, D.9, D.11) and the warning about ambiguous "sie"."""
    blocks = [f"**Warning** ({dim}): {ambiguous_line(dim, entry)}."
              for dim, entry in found["ambiguous_sie"].items() if entry["n"]]
    outcomes = found["gdr_outcomes"]
    if outcomes["overall"] is not None:
        def row(name, entry):
            return [name, *[fmt(entry[o], 3) for o in OUTCOMES], str(entry["n"])]

        blocks.append(Table(["Prompted group", *OUTCOMES, "continuations"],
                            [row(g, e) for g, e in outcomes["groups"].items()],
                            summary_rows=[row("all", outcomes["overall"])],
                            caption="GDR outcomes (App. D.1, Fig. D.8): share of continuations whose first pronoun "
                                    "is of the prompted group, of another group, or absent (mean over runs)"))
    if found["substitutions"]:
        columns = [g for g in groups if any(g in entry for entry in found["substitutions"].values())]
        blocks.append(Table(["Prompted neopronoun", *columns, "continuations"],
                            [[g, *[fmt(e.get(c), 3) if c != g else "" for c in columns], str(e["n"])]
                             for g, e in found["substitutions"].items()],
                            caption="Substitutions (App. D.1, Fig. D.9): share of a neopronoun's GDR continuations "
                                    "whose first pronoun is of another group (mean over runs)"))
    variance = found.get("accuracy_variance")
    if variance is not None:
        blocks.append(Table(["Pronoun group", "GDR accuracy", "SD over runs"],
                            [[g, fmt(e["accuracy"], 3), fmt(e["sd"], 3)] for g, e in variance["groups"].items()],
                            caption="Accuracy and its variance over runs (App. D.1)",
                            notes=f"Spearman's ρ of accuracy against SD over the {variance['n']} groups: "
                                  f"{fmt(variance['rho'], 2)} (p {format_p(variance['p'])}); the paper finds them "
                                  "inversely related (lower accuracy, more fluctuation)."))
    pe = found["pe_consistency"]
    if pe is not None:
        rows = [[label, "not applicable" if pe["categories"][name] is None else fmt(pe["categories"][name]["mean"], 1),
                 "" if pe["categories"][name] is None else fmt(pe["categories"][name]["share"], 3)]
                for name, label in PE_CATEGORIES.items()]
        blocks.append(Table(["Category", f"problems of {pe['n_problems']} (mean over runs)", "share"], rows,
                            caption="PE consistency per problem over its pronoun variants (App. D.4, Fig. D.11)",
                            notes="Neutral: singular they; German has no established neutral pronoun, so no "
                                  "group is neutral by default (a group's kind in pronouns.yaml)."))
    return blocks


def app_d_tables(document: dict) -> list:
    """delta.md's App. D tables: per comparison the GDR outcome shares overall and per group, the
    substitutions and the PE categories before, after and their change, and the D.1 correlation."""
    tables = []
    for comparison in document["comparisons"]:
        found = comparison.get("app_d")
        if not found:
            continue
        label = f"{comparison['before']['label']} → {comparison['after']['label']}"
        outcomes = found["gdr_outcomes"]
        rows = [[name, o, *_change_cells(entry[o])] for name, entry in
                [*((g, e) for g, e in outcomes.get("groups", {}).items()), ("all", outcomes.get("overall") or {})]
                for o in OUTCOMES if o in entry]
        rows += [[f"{group} → {other}", "substitution", *_change_cells(entry)]
                 for group, others in found["substitutions"].items() for other, entry in others.items()]
        rows += [[PE_CATEGORIES[name], "PE problems", *_change_cells(entry, 1)]
                 for name, entry in found["pe_consistency"].items()]
        rho = found["accuracy_variance"]
        tables.append(Table(["Entry", "figure", "before", "after", "Δ"], rows,
                            caption=f"App. D, {label}: GDR outcome shares (Fig. D.8), substitutions (Fig. D.9) "
                                    "and PE consistency (Fig. D.11), mean over runs",
                            notes=f"D.1, ρ(accuracy, SD over runs): {fmt(rho['before'], 2)} → "
                                  f"{fmt(rho['after'], 2)}. Descriptive: the dimensions above carry the tests."))
    return tables


def _change_cells(entry: dict, digits: int = 3) -> list[str]:
    return [fmt(entry.get("before"), digits), fmt(entry.get("after"), digits),
            fmt(entry.get("delta"), digits, signed=True)]


def provenance_lines(meta: dict) -> list[str]:
    settings = meta["settings"]
    return [f"decoding: {meta['decoding']}, seed {settings['seed']}, {settings['runs']} run(s)",
            *[f"note: {note}" for note in meta["notes"]]]


def histogram_series(summary: dict) -> list[tuple[str, dict]]:
    """Fig. 4's histograms for the panels beside the radar (none for runs without them)."""
    return [(TITLES[name], entry["histogram"]) for name, entry in summary.get("distributions", {}).items()]


def radar_series(label: str, summary: dict) -> tuple[str, dict]:
    """One radar polygon: the computed dimensions' means, labelled with the index."""
    gifi = summary["gifi"]
    name = f"{label} (GIFI {gifi['mean']:.3f}, {gifi['n_dimensions']} dim.)" if gifi["mean"] is not None else label
    return name, {d: e.get("mean") for d, e in summary["dimensions"].items()}


def _group_cell(figure: dict | None) -> str:
    if figure is None:
        return fmt(None)
    return fmt(figure["value"], 3) if figure.get("sd") is None else _pm(figure["value"], figure["sd"])


def _pm(value, sd) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if sd is None else f"{value:.3f} ± {sd:.3f}"
