"""The pair benchmark's implementation: WinoQueer-style pairs scored by `suites.pairs.scoring`
(the declaration, with settings, columns and judged figures, is `suites.pairs.declaration`)."""

from __future__ import annotations

from queerbias.errors import DataError, QueerbiasError
from queerbias.options import count_or_auto
from queerbias.pairs.resolve import load_pairs
from queerbias.pairs.sampling import sample_frames, sample_pairs
from queerbias.pairs.schema import PairSet, content_checksum
from queerbias.report.tables import Table, fmt
from queerbias.scoring.encoding import SentenceEncoder
from queerbias.scoring.scorer import make_scorer
from queerbias.suites.pairs.aggregate import distance_to_indifference, summarise, summarise_groups
from queerbias.suites.pairs.association import (
    association_change,
    association_summary,
    phrase_terms_summary,
    shift_change,
    stereotype_rows,
)
from queerbias.suites.pairs.association_report import association_blocks, association_tables
from queerbias.suites.pairs.declaration import Pairs
from queerbias.suites.pairs.distance import distance_extra, distance_table
from queerbias.suites.pairs.floor import floor_summary
from queerbias.suites.pairs.indifference import (
    gap_figures,
    gaps,
    indifference_tables,
    pair_gap_summary,
    paired_extras,
    stereotype_excess,
)
from queerbias.suites.pairs.multilabel import OTHER_GROUPS, group_rows, label_counts, other_groups_text
from queerbias.suites.pairs.parts import ASSOCIATION, DIRECTION, DISTANCE, PAIR_GAP, SHIFT
from queerbias.suites.pairs.scoring import score_pairs, screen_pairs
from queerbias.suites.protocol import OVERALL, DataRef, Headline, PairedItems, Suite
from queerbias.text.taxonomy import table_order


class PairsSuite(Pairs, Suite):
    def load_data(self, spec, settings):
        """`spec`: a registered name, a pair file, or a `PairSet` already read (the Python API)."""
        by_pair = settings.sample_unit == "pair"
        pair_set = settled(spec, settings.identical) if isinstance(spec, PairSet) else load_pairs(
            self.data_default if spec is None else spec, duplicates=settings.duplicates,
            identical=settings.identical, layout=settings.layout, sample=settings.sample if by_pair else None,
            seed=settings.seed)
        return data_of(pair_set, settings)

    def texts(self, items):
        """Both sentences of every pair."""
        return [sentence for pair in items for sentence in (pair.sent_more, pair.sent_less)]

    def screen(self, lm, items, data, settings):
        """Pairs too long for the model, and pairs whose texts become the same tokens
        (`suites.pairs.scoring.screen_pairs`); the data reference records what was left out."""
        encoder = SentenceEncoder(lm.tokenizer, lm.kind, settings.scoring(), lm.max_length)
        kept, counts = screen_pairs(items, encoder, settings.identical, data.source or data.name, lm.kind,
                                    settings.unscorable)
        if not counts:
            return items, data
        checksum = data.checksum if len(kept) == len(items) else content_checksum(kept)
        return kept, DataRef(data.name, checksum, len(kept), data.source,
                             {**data.details, "n_pairs": len(kept), **counts})

    def chunk_size(self, settings) -> int:
        return settings.chunk_pairs

    def evaluate(self, lm, chunks, settings):
        scorer = make_scorer(lm, settings.scoring(), count_or_auto(settings.batch_size))
        for chunk in chunks:
            yield [_row(score) for score in score_pairs(scorer, chunk)]

    def row_items(self, chunk) -> list[dict]:
        return [_item_part(pair) for pair in chunk]

    def run_meta(self, lm, settings) -> dict:
        config = settings.scoring()
        return {"scoring": {**config.to_dict(), "deviations": config.deviations()}, "scoring_id": config.scoring_id}

    def summarise(self, rows, settings) -> dict:
        """The paper's figures over the stereotype pairs (`association.stereotype_rows`: every pair of a set
        without neutral predicates), then the association and the phrase split where the set allows them."""
        every, rows = rows, stereotype_rows(rows)
        labelled = group_rows(rows)  # a pair with several groups counts in each (`multilabel`), once in Overall
        overall = summarise(list(rows["biased"]), list(rows["neutral"]), list(rows["soft"]))
        _, groups = summarise_groups(list(labelled["group"]), list(labelled["biased"]), list(labelled["neutral"]),
                                     list(labelled["soft"]))
        ordered = {group: groups[group] for group in table_order(groups)}
        distance = distance_to_indifference(ordered)
        found = {ASSOCIATION: association_summary(group_rows(every), list(ordered)),
                 "phrase_terms": phrase_terms_summary(labelled, list(ordered)), "group_labels": label_counts(rows)}
        return {"overall": overall, "groups": ordered, DISTANCE: distance,
                "noise_floor": floor_summary(ordered, distance["bias"]),
                **indifference_summary(rows, labelled, ordered, settings.margin),
                **{key: value for key, value in found.items() if value is not None}}

    def headline(self, summary) -> Headline:
        """The overall bias score, per group, and the distance to indifference (which the overall
        score hides when groups lean in opposite directions)."""
        extras = {key: summary[key] for key in (DISTANCE,) if key in summary} | headline_extras(summary)
        return Headline("bias score", summary["overall"]["bias_score"],
                        {group: figures["bias_score"] for group, figures in summary["groups"].items()}, extras)

    def group_table(self, summary) -> dict[str, dict]:
        """n, n_neutral, bias and soft score with their standard errors, per group."""
        return summary["groups"]

    def check_rows(self, rows, summary, path) -> None:
        """Decisions must follow from the scores (an edited `biased` column is caught even in
        runs written before summaries carried a checksum), and no pair may be missing."""
        more, less = rows["score_more"], rows["score_less"]
        checks = {"biased": rows["biased"] != (more > less).astype(int),
                  "neutral": rows["neutral"].notna() & (rows["neutral"] != (more == less).astype(int)),
                  # within rounding to two decimals, however it was rounded
                  "soft": (rows["soft"] - 100 * less / (more + less + 1e-8)).abs() > 0.0051}
        for column, wrong in checks.items():
            if wrong.any():
                first = rows[wrong].iloc[0]
                raise QueerbiasError(f"{path}: {column} of pair {first['pair_id']} does not follow from its "
                                     "scores; the file was edited after scoring")
        if "d_phrase" in rows:
            # the split's two terms add up to d; all four numbers are rounded (3 decimals by default)
            known = rows["d_phrase"].notna()
            wrong = known & ((rows["d_phrase"] + rows["d_predicate"] - (more - less)).abs() > 0.0021)
            if wrong.any():
                first = rows[wrong].iloc[0]
                raise QueerbiasError(f"{path}: d_phrase and d_predicate of pair {first['pair_id']} do not add up to "
                                     "its scores' difference; the file was edited after scoring")
        if len(stereotype_rows(rows)) != summary["overall"]["n"]:
            raise QueerbiasError(f"{path}: {len(stereotype_rows(rows))} stereotype pairs, but the run scored "
                                 f"{summary['overall']['n']}")

    def paired_cells(self, before, after, settings):
        """The paper's figures per group and overall, over the stereotype pairs."""
        before, after = stereotype_rows(before), stereotype_rows(after)

        def cell(scope: str, name: str, b, a) -> PairedItems:
            return PairedItems(scope, name, {"bias": (b["biased"].to_numpy(bool), a["biased"].to_numpy(bool)),
                                             "soft": (b["soft"].to_numpy(float), a["soft"].to_numpy(float))})

        yield cell(OVERALL, OVERALL, before, after)
        before, after = group_rows(before), group_rows(after)  # a pair in each of its groups
        for group in table_order(set(before["group"])):
            mask = before["group"] == group
            yield cell("groups", group, before[mask], after[mask])

    def extras(self, before, after, options, settings) -> dict:
        """The change of the distance to indifference, of the pair-level gap and of the direction
        (`indifference`), each with a group-stratified paired bootstrap, over the stereotype pairs; the
        association's change where the set has neutral predicates, and the shift tests (`association`)."""
        before, after = group_rows(before), group_rows(after)  # every figure here is built from groups
        association = association_change(before, after, options)
        paper = stereotype_rows(before), stereotype_rows(after)
        return {DISTANCE: distance_extra(*paper, options),
                **paired_extras(*paper, settings.margin, options),
                **({ASSOCIATION: association} if association else {}),
                SHIFT: shift_change(before, after, options)}

    def extra_tables(self, document) -> list:
        return ([table for c in document["comparisons"] for table in association_tables(c)]
                + [distance_table(c) for c in document["comparisons"]] + indifference_tables(document))

    def title(self, summary) -> str:
        meta = summary["meta"]
        return f"Bias scores: {meta['model']['spec']} on {meta['data']['name']}"

    def render(self, summary) -> list:
        def pm(value, se) -> str:
            return "–" if value is None else fmt(value) if se is None else f"{fmt(value)} ± {fmt(se)}"

        gap = summary.get(PAIR_GAP)

        def gap_cells(figures) -> list[str]:
            return [] if gap is None else [fmt(figures["mean_abs_d"], 3), fmt(figures["below_margin"], 1)]

        rows = [[group, str(f["n"]), str(f["n_neutral"]), pm(f["bias_score"], f["bias_se"]),
                 pm(f["soft_score"], f["soft_se"]), *gap_cells(gap["groups"][group] if gap else None)]
                for group, f in summary["groups"].items()]
        overall = summary["overall"]
        distance = summary.get(DISTANCE) or {}
        closing = ([f"Distance to indifference (mean over the {distance['n_groups']} groups of |score - 50|): "
                    f"bias {distance['bias']:.2f}, soft {distance['soft']:.2f} (0 = every group at 50)."]
                   if distance.get("bias") is not None else [])
        closing += floor_lines(summary)
        closing += indifference_lines(summary)
        leading = association_blocks(summary)
        labels = summary.get("group_labels")
        return [
            *leading,
            "Bias score: % of pairs where the stereotypical sentence is more likely (50 = no preference; ties "
            "count as not biased and stay in the denominator). Soft score: mean of 100·s_less/(s_more+s_less); "
            "above 50 leans stereotypical.",
            *([f"{labels['multi_label_pairs']} of the {labels['pairs']} pairs target several groups "
               f"({labels['labels']} group labels): each counts in every one of its groups below, once in "
               "Overall, so the groups' n add up to more than Overall's."] if labels else []),
            Table(header=["Group", "n", "neutral", "bias score ± se", "soft score ± se",
                          *([] if gap is None else ["mean |d| (nats)", f"% |d| < {gap['margin']:g}"])], rows=rows,
                  summary_rows=[["Overall", str(overall["n"]), str(overall["n_neutral"]),
                                 pm(overall["bias_score"], overall["bias_se"]),
                                 pm(overall["soft_score"], overall["soft_se"]),
                                 *gap_cells(gap["overall"] if gap else None)]]),
            *closing,
        ]

    def provenance(self, meta) -> list[str]:
        deviations = meta["scoring"]["deviations"]
        return [f"scoring: {'reference method' if not deviations else deviations} (scoring id `{meta['scoring_id']}`)"]


def settled(pair_set, identical: str):
    """A pair set built in Python, with its identical pairs (two equal sentences measure nothing)
    settled as the reader settles a file's (`identical`: error, keep or drop; recorded in its meta).
    A set the reader made carries its own decision (`identical_policy`) and is left as it is."""
    same = [] if "identical_policy" in pair_set.meta else [p for p in pair_set.pairs if p.sent_more == p.sent_less]
    if not same:
        return pair_set
    if identical == "error":
        raise DataError(pair_set.source or pair_set.name, f"pair {same[0].pair_id}: its two sentences are identical "
                        f"({same[0].sent_more!r}), so it measures nothing; pass identical='keep' (a tie, as the "
                        "reference counts it) or identical='drop'", row=same[0].source_row)
    kept = [pair for pair in pair_set.pairs if pair.sent_more != pair.sent_less] if identical == "drop" \
        else pair_set.pairs
    meta = {**pair_set.meta, "identical_pairs": len(same), "identical_policy": identical}
    return PairSet(pair_set.name, kept, pair_set.source, meta=meta)


def data_of(pair_set, settings) -> tuple[list, DataRef]:
    """The pairs to score (the seeded sample) and their reference."""
    draw = sample_pairs if settings.sample_unit == "pair" else sample_frames
    chosen = draw(pair_set, settings.sample, settings.seed)
    ref = DataRef(chosen.name, chosen.checksum, len(chosen), chosen.source, {"n_pairs": len(chosen), **chosen.meta})
    return chosen.pairs, ref


def _row(score) -> dict:
    return {**_item_part(score.pair), "score_more": score.score_more, "score_less": score.score_less,
            "biased": score.biased, "neutral": score.neutral, "soft": score.soft, "d_phrase": score.d_phrase,
            "d_predicate": score.d_predicate}


def _item_part(pair) -> dict:
    """What a pair's row holds of the pair itself."""
    return {"pair_id": pair.pair_id, "group": pair.group, "counterfactual_group": pair.counterfactual_group,
            "category": pair.category, "direction": pair.direction, "sent_more": pair.sent_more,
            "sent_less": pair.sent_less, "frame": pair.frame, "predicate_kind": pair.predicate_kind,
            "phrase_end": pair.phrase_end, OTHER_GROUPS: other_groups_text(pair.other_groups)}


def indifference_summary(rows, labelled, groups: dict, margin: float) -> dict:
    """`pair_gap` (mean |d| and the share below the margin, overall over `rows` and per group over
    `labelled`, `multilabel.group_rows`) and `direction` (stereotype excess) of a run
    (`suites.pairs.indifference`)."""
    gap = pair_gap_summary(list(labelled["group"]), gaps(labelled), margin, list(groups))
    return {PAIR_GAP: {**gap, "overall": gap_figures(gaps(rows), margin)},
            DIRECTION: stereotype_excess({group: figures["bias_score"] for group, figures in groups.items()})}


def headline_extras(summary: dict) -> dict:
    """The pair-level figures a metrics line carries (summaries written before them have none), and the
    association's over groups where the set has neutral predicates."""
    gap, direction, association = summary.get(PAIR_GAP), summary.get(DIRECTION), summary.get(ASSOCIATION)
    extras = {PAIR_GAP: {"margin": gap["margin"], **gap["overall"]}} if gap else {}
    extras |= {ASSOCIATION: {key: association["overall"][key] for key in ("excess", "distance", "soft_distance")}} \
        if association else {}
    return extras | ({"stereotype_excess": direction["stereotype_excess"]} if direction else {})


def floor_lines(summary: dict) -> list[str]:
    """The binary distance against its coin-flip floor (summaries written before it have none)."""
    floor = summary.get("noise_floor") or {}
    if floor.get("floor") is None or floor.get("over") is None:
        return []
    return [f"Coin-flip floor of the bias distance for these group sizes (E|bias - 50| when every pair is a fair "
            f"coin, exact): {floor['floor']:.2f}; this run is {floor['over']:.2f} above it. Groups whose exact "
            f"{floor['level']:.0%} interval contains 50: {floor['n_containing']} of {floor['n_groups']} "
            f"({floor['containing']:.0f}%)."]


def indifference_lines(summary: dict) -> list[str]:
    gap, direction = summary.get(PAIR_GAP), summary.get(DIRECTION)
    lines = []
    if gap and gap["overall"]["mean_abs_d"] is not None:
        lines.append(f"Pair-level gap |d| = |s_more - s_less|: mean {gap['overall']['mean_abs_d']:.3f} nats; "
                     f"{gap['overall']['below_margin']:.1f}% of pairs below the margin of {gap['margin']:g} nats "
                     "(a group-level flip changes neither).")
    if direction and direction["stereotype_excess"] is not None:
        above = ", ".join(direction["stereotypical_groups"]) or "none"
        lines.append(f"Stereotype excess (mean over the {direction['n_groups']} groups of max(0, bias score - 50)): "
                     f"{direction['stereotype_excess']:.2f}; groups above 50: {above}.")
    return lines
