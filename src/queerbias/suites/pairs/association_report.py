"""How the association and the frame-level shift tests read in summary.md, delta.md and closing lines.

The figures are `suites.pairs.association`'s; this module only words and tabulates them, each beside
what an indifferent model would show for the same sizes (the coin-flip floors, and the chance of a
false shift that the correction leaves), so that a target can be read against luck.
"""

from __future__ import annotations

from queerbias.report.formatting import format_p, stars_of, with_ci
from queerbias.report.tables import Cell, Table, fmt
from queerbias.suites.pairs.parts import ASSOCIATION, SHIFT

C_DEFINITION = ("c = mean d of the stereotype pairs − mean d of the neutral pairs of the same group and frame (d = "
                "s_more − s_less, nats): what is the same for every predicate, the identity phrase's own likelihood, "
                "cancels")


def association_blocks(summary: dict) -> list:
    """summary.md's association table and its closing line, then the phrase split (nothing for a set
    without neutral predicates or phrase ends)."""
    found: list = []
    association, terms = summary.get(ASSOCIATION), summary.get("phrase_terms")
    if association:
        overall = association["overall"]
        rows = [[group, str(g["n_frames"]), fmt(g["score"], 1), with_ci(g["mean_c"], g["ci_c"], 3),
                 fmt(g["offset"], 3), fmt(g["d_stereotype"], 3)] for group, g in association["groups"].items()]
        found += [
            f"Association, with the identity phrase's own term cancelled: {C_DEFINITION}. The association score is "
            "the % of a group's frames with c > 0 (50 = no association); the offset is the neutral pairs' mean d, "
            "which the paper's d adds to every predicate.",
            Table(header=["Group", "frames", "association score", f"mean c [{association['level']:.0%} CI]",
                          "offset (neutral d)", "stereotype d"], rows=rows,
                  notes=f"Intervals: bootstrap of frames within the group ({association['resamples']} resamples)."),
            f"Association over the {overall['n_groups']} groups: excess (mean of max(0, score − 50)) "
            f"{overall['excess']:.2f} (coin-flip floor {overall['excess_floor']:.2f}), distance (mean |score − 50|) "
            f"{overall['distance']:.2f} (floor {overall['floor']:.2f}), soft distance (mean |mean c|) "
            f"{overall['soft_distance']:.3f} nats; groups above 50: "
            f"{', '.join(overall['stereotypical_groups']) or 'none'}.",
        ]
    if terms:
        rows = [[group, str(g["n"]), fmt(g["d_phrase"], 3), fmt(g["d_predicate"], 3)]
                for group, g in terms["groups"].items()]
        share = terms["overall"]["phrase_share"]
        found.append(Table(header=["Group", "pairs", "phrase term of d", "predicate term of d"], rows=rows,
                           caption="d split at the end of the identity phrase (nats; > 0 prefers the stereotypical "
                                   "sentence)",
                           notes="Phrase term: the scored tokens up to the end of the identity phrase (for a causal LM "
                                 "its own tokens after the identity word); predicate term: the rest. Mean |·| over "
                                 f"groups: phrase {terms['overall']['abs_phrase']:.3f}, predicate "
                                 f"{terms['overall']['abs_predicate']:.3f}"
                                 + (f" ({share:.0f}% in the phrase)." if share is not None else ".")))
    return found


def association_tables(comparison: dict) -> list[Table]:
    """delta.md: the association's change (when the set has neutral predicates) and the shift tests per group."""
    tables = []
    label = f"{comparison['after']['label']} against {comparison['before']['label']}"
    association, shift = comparison.get(ASSOCIATION), comparison.get(SHIFT)
    if association:
        figures = [("association excess (pp)", "excess", 2), ("association distance (pp)", "bias", 2),
                   ("association soft distance (mean |c|, nats)", "soft", 3)]
        tables.append(Table(
            header=["Association", "before", "after", "Δ [95% CI]", "p"],
            rows=[[title, fmt(association[f"{key}_before"], digits), fmt(association[f"{key}_after"], digits),
                   Cell(with_ci(association[f"delta_{key}"], association[f"ci_{key}"], digits),
                        marks=stars_of(association[f"p_{key}"])), format_p(association[f"p_{key}"])]
                  for title, key, digits in figures],
            caption=f"{label}: the association over {association['n_groups']} groups and {association['n_frames']} "
                    "frames",
            notes=(f"{C_DEFINITION}. Intervals and p: bootstrap of frames within groups. Coin-flip floors for these "
                   f"frame counts: excess {association['excess_floor']:.2f}, distance {association['floor']:.2f}.")))
    if shift:
        measures = shift["measures"]
        titles = {"d": "Δd (stereotype pairs)", "c": "Δc", "d_neutral": "Δd (neutral pairs)"}
        rows = []
        for group, entry in shift["groups"].items():
            cells = [group, str(entry["n_units"])]
            for m in measures:
                e = entry[m]
                cells += [Cell(with_ci(e["delta"], e["ci"], 3), marks=stars_of(e["p_adj"]) if m != "d_neutral" else ""),
                          f"{e['towards']}/{e['towards'] + e['away']}", format_p(e["p_adj"])]
            rows.append(cells)
        header = ["Identity", f"{shift['unit']}s"]
        for m in measures:
            header += [f"{titles[m]} [95% CI]", "towards", "p (adj.)"]
        tables.append(Table(
            header=header, rows=rows,
            caption=f"{label}: shift towards the stereotype per group, the {shift['unit']} as the unit. Shifted "
                    f"(corrected p < {shift['alpha']:g} on {' or '.join(m for m in measures if m != 'd_neutral')}): "
                    f"{', '.join(shift['shifted']) or 'none'}",
            notes=(f"Per {shift['unit']}: the mean d of its stereotype pairs" + (", c and the mean d of its neutral "
                   "pairs" if "c" in measures else "") + f". Towards: {shift['unit']}s whose change is positive, of "
                   f"those that changed. p: one-sided exact sign test over {shift['unit']}s, "
                   f"{shift['correction']}-corrected over groups; {luck_clause(shift)}. Intervals: bootstrap of "
                   f"{shift['unit']}s within the group.")))
    return tables


def luck_clause(shift: dict) -> str:
    """The chance that an indifferent model meets "no group shifted" by luck, as the correction bounds it."""
    return (f"a model whose changes are coin flips names some group with probability at most {shift['alpha']:g} "
            f"({shift['correction']})")


def shift_clause(shift: dict | None) -> str:
    """For a closing line: the groups shifted towards the stereotype by the frame-level test ("" without it)."""
    if not shift:
        return ""
    moved = f"; neutral d moved by at most {shift['neutral_moved_max']:.2f} nats" \
        if shift.get("neutral_moved_max") is not None else ""
    return (f"shifted towards the stereotype ({shift['unit']} sign test, {shift['correction']}, corrected p < "
            f"{shift['alpha']:g}): {', '.join(shift['shifted']) or 'none'}{moved}")


def association_clause(association: dict | None) -> str:
    """For a closing line: the association's excess and soft distance before -> after ("" without it)."""
    if not association:
        return ""
    shrink = association.get("soft_shrink_pct")
    return (f"association excess {fmt(association['excess_before'])} -> {fmt(association['excess_after'])} "
            f"(change {with_ci(association['delta_excess'], association['ci_excess'])}; floor "
            f"{association['excess_floor']:.2f}), association soft distance {fmt(association['soft_before'], 3)} -> "
            f"{fmt(association['soft_after'], 3)} nats"
            + (f" ({-shrink:+.0f}%)" if shrink is not None else ""))
