"""What a training run's model card and closing lines say about a pair benchmark (`PairCard`, the pair
suite's card companion): the summary sentence on the distance to indifference, the before/after
table per identity group, the group sizes as a limitation, the closing clauses and the
specificity ratio.

Every figure is the compare report's (delta.json of the base against the last checkpoint).
"""

from __future__ import annotations

from queerbias.report.formatting import best_sentence, change_text, star_legend, with_ci
from queerbias.report.options import CORRECTIONS
from queerbias.report.paired_stats import stars
from queerbias.report.tables import Cell, Table, fmt, to_markdown
from queerbias.suites.companions import CardHooks, IndexMetric
from queerbias.suites.pairs.association_report import association_tables, shift_clause
from queerbias.suites.pairs.indifference import (
    closing_clauses,
    harm_lines,
    indifference_tables,
    specificity_lines,
)
from queerbias.suites.pairs.parts import ASSOCIATION, DISTANCE, SHIFT
from queerbias.suites.protocol import OVERALL


def summary_sentence(comparison: dict, data: str, evaluated: str) -> str | None:
    """How the association changed, where the set has neutral predicates, and the groups the frame-level test
    found shifted; then how the paper's distance to indifference of the bias and soft score changed, with
    intervals and p."""
    d = comparison.get(DISTANCE)
    if not d:
        return None
    association, shift = comparison.get(ASSOCIATION), comparison.get(SHIFT)
    lead = ""
    if association:
        lead = (f"On {data} ({evaluated}), the association of each group with its stereotypes, measured against "
                f"neutral predicates of the same frame so that the identity phrase's own likelihood cancels, went "
                f"from an excess of {association['excess_before']:.2f} to {association['excess_after']:.2f} points "
                f"({_change(association, 'excess')}; coin-flip floor {association['excess_floor']:.2f}) and a soft "
                f"distance of {association['soft_before']:.3f} to {association['soft_after']:.3f} nats "
                f"({_change(association, 'soft')}). ")
    if shift:
        lead += (f"Groups shifted towards the stereotype ({shift['unit']}-level sign test, {shift['correction']}): "
                 f"{', '.join(shift['shifted']) or 'none'}. ")
    return lead + (f"On {data} ({evaluated}), the paper's distance to indifference (mean over {d['n_groups']} identity groups of "
            f"|score − 50|) went from {d['bias_before']:.2f} to {d['bias_after']:.2f} for the bias score "
            f"({_change(d, 'bias')}) and from {d['soft_before']:.2f} to {d['soft_after']:.2f} for the soft score "
            f"({_change(d, 'soft')}).{floor_sentence(d)}")


def floor_sentence(d: dict) -> str:
    """The bias distance against its coin-flip floor ("" for a report written before it)."""
    if d.get("floor") is None:
        return ""
    return (f" Its coin-flip floor for these group sizes is {d['floor']:.2f} (the distance a model choosing at "
            f"random per pair scores on average), so the bias distance went from {d['over_before']:.2f} to "
            f"{d['over_after']:.2f} above it; groups whose exact 95% interval contains 50: "
            f"{d['containing_before']:.0f}% → {d['containing_after']:.0f}%.")


def _change(entry: dict, measure: str) -> str:
    p = entry.get(f"p_{measure}")
    verdict = "" if p is None else ", significant at p < .05" if p < 0.05 else ", not significant at p < .05"
    return f"Δ {change_text(entry, measure)}{verdict}"


def blocks(document: dict, comparison: dict, evaluated: str) -> list[str]:
    """What was scored, the before/after table and the best checkpoint's sentence."""
    data = document["meta"].get("data") or {}
    described = (f"{data.get('n_items')} pairs of `{data.get('name')}` (checksum `{data.get('checksum')}`), "
                 f"{evaluated}; scored with the WinoQueer shared-token method "
                 f"(scoring id `{document['meta'].get('scoring_id')}`).")
    found = [described + floor_sentence(comparison.get(DISTANCE) or {}),
             to_markdown(before_after_table(document, comparison)).rstrip("\n")]
    found[:0] = [to_markdown(table).rstrip("\n") for table in association_tables(comparison)]
    found += [to_markdown(table).rstrip("\n") for table in indifference_tables({"comparisons": [comparison]})]
    best = document.get("best")
    if best:
        found.append(best_sentence(best) + " The card reports the last checkpoint; a checkpoint chosen on these "
                                           "pairs would be optimistic on them.")
    return found


def limitations(comparisons: list[dict]) -> list[str]:
    """The group sizes over every pair benchmark of the run."""
    sizes = [entry["n"] for comparison in comparisons for entry in (comparison.get("groups") or {}).values()]
    if not sizes:
        return []
    return [f"- Small samples: identity groups hold {min(sizes)} to {max(sizes)} pairs, so a group's change is "
            "noisy; read the intervals and the adjusted p-values, not the point estimates."]


def before_after_table(document: dict, comparison: dict) -> Table:
    """Per identity group and overall: bias and soft score before, after and their change with
    interval and stars, then the distance to indifference."""
    def cells(entry: dict) -> list:
        """Before, after and the change with its stars: the stored ones (groups: adjusted p), or
        from the entry's p for the distance, which has none stored."""
        out = []
        for m in ("bias", "soft"):
            p = entry.get(f"p_{m}")
            marks = entry[f"stars_{m}"] if f"stars_{m}" in entry else "" if p is None else stars(p)
            out += [fmt(entry.get(f"{m}_before")), fmt(entry.get(f"{m}_after")),
                    Cell(with_ci(entry.get(f"delta_{m}"), entry.get(f"ci_{m}")), marks=marks)]
        return out

    groups = comparison.get((document.get("scopes") or ["groups"])[0]) or {}
    summary = [["Overall", str(comparison["overall"]["n"]), *cells(comparison["overall"])]]
    if comparison.get(DISTANCE):
        d = comparison[DISTANCE]
        summary.append(["Distance to indifference", f"{d['n_groups']} groups", *cells(d)])
    meta = document["meta"]
    return Table(
        header=["Identity", "n", "bias before", "bias after", "Δbias [95% CI]", "soft before", "soft after",
                "Δsoft [95% CI]"],
        rows=[[group, str(entry["n"]), *cells(entry)] for group, entry in groups.items()],
        summary_rows=summary,
        caption=f"{comparison['after']['label']} against {comparison['before']['label']} (percentage points)",
        notes=(f"Bias score: % of pairs where the stereotypical sentence is more likely; soft score: mean of "
               f"100·s_less/(s_more+s_less); 50 = no preference. Distance to indifference: mean over groups of "
               f"|score − 50|. Δbias: exact McNemar test; Δsoft: {meta.get('soft_test_description')}; distance: "
               f"paired bootstrap within groups. Intervals: {meta.get('ci')} ({meta.get('n_resamples')} resamples). "
               f"Stars: groups by {CORRECTIONS.get(meta.get('correction'), meta.get('correction'))}-adjusted p, "
               f"Overall and distance unadjusted: {star_legend()}."),
    )


class PairCard(CardHooks):
    """A pair benchmark on the card and in the closing lines: the distance to indifference first."""

    index_task = "Anti-LGBTQ+ bias (WinoQueer-style sentence pairs)"

    def index_metrics(self, suite):
        """Bias and soft score overall and their distances to indifference."""
        return (IndexMetric("bias_score", "bias score", OVERALL, "bias"),
                IndexMetric("soft_score", "soft score", OVERALL, "soft"),
                IndexMetric("distance_to_indifference_bias", "distance to indifference of the bias score",
                            DISTANCE, "bias"),
                IndexMetric("distance_to_indifference_soft", "distance to indifference of the soft score",
                            DISTANCE, "soft"))

    def closing_figures(self, comparison, measures):
        """The association (excess and soft distance) where the set has neutral predicates, which a mitigation
        should lower without moving the identity phrase; else the distance to indifference (bias to one
        decimal, as the scores, soft to two); the overall scores where a comparison lacks both."""
        if comparison.get(ASSOCIATION):
            return "association ", comparison[ASSOCIATION], [("excess", "excess", 2), ("soft", "soft distance", 3),
                                                            ("bias", "distance", 1)]
        if not comparison.get(DISTANCE):
            return super().closing_figures(comparison, measures)
        return "distance to indifference ", comparison[DISTANCE], [("bias", "bias", 1), ("soft", "soft", 2)]

    def closing_clauses(self, comparison) -> str:
        """The frame-level shift test, then (after the association) the paper's distance to indifference,
        then the pair-level |d| change, the stereotype excess and the crossed and harmful groups."""
        shift = shift_clause(comparison.get(SHIFT))
        paper = ""
        if comparison.get(ASSOCIATION) and comparison.get(DISTANCE):
            d = comparison[DISTANCE]
            paper = (f"; paper's distance to indifference bias {fmt(d['bias_before'], 1)} -> {fmt(d['bias_after'], 1)} "
                     f"(change {change_text(d, 'bias', 1)}), soft {fmt(d['soft_before'])} -> {fmt(d['soft_after'])}")
        return (f"; {shift}" if shift else "") + paper + closing_clauses(comparison)

    def closing_lines(self, documents) -> list[str]:
        """Harm on every pair benchmark of the run, then the specificity ratio against the knowledge set."""
        return harm_lines(documents) + specificity_lines(documents)

    def card_summary(self, comparison, data, evaluated):
        return summary_sentence(comparison, data, evaluated)

    def card_blocks(self, document, comparison, evaluated):
        return blocks(document, comparison, evaluated)

    def card_limitations(self, comparisons):
        return limitations(comparisons)
