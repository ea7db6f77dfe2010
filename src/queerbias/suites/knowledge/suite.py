"""The knowledge set as a suite: accuracy and margin on definitional pairs.

Each pair holds a correct statement of what an identity word means (`sent_more`) and its
counterfactual with the identity swapped (`sent_less`); half the facts put the queer word
in the correct sentence, half in the wrong one, so preferring either side scores 50 %.
Loading, screening and scoring are the pair benchmark's (this class is a `PairsSuite`);
what differs is what the rows mean: accuracy = % of pairs whose correct sentence is more
likely (ties count as wrong, as the reference counts a tie as not biased), margin d =
s_correct - s_counterfactual in nats. A mitigation must not lower either: it would buy
indifference by forgetting what the words mean (the analogue of StereoSet's language-model
score next to its stereotype score, Nadeem et al. 2021). Before/after: McNemar on the
correct flags, Wilcoxon (or t) on the margins; the best checkpoint keeps accuracy.
"""

from __future__ import annotations

from queerbias.suites.pairs.suite import PairsSuite
from queerbias.suites.protocol import (
    BINARY,
    CONTINUOUS,
    OVERALL,
    Criterion,
    Headline,
    Measure,
    PairedItems,
    Suite,
)

CRITERIA = {
    "accuracy": Criterion("highest knowledge accuracy (ties: largest mean margin)", ("accuracy", "margin"),
                          lambda row: (-row["accuracy"], -row["margin"]), "the knowledge accuracy and margin"),
}


class KnowledgeSuite(PairsSuite):
    name = "knowledge"
    description = "Definitional pairs: does the model still prefer the correct meaning of an identity word?"
    data_default = "queerbias-knowledge"
    data_help = "a pair benchmark of definitional pairs (sent_more: the correct statement); default queerbias-knowledge"
    licence = "queerbias-knowledge: MIT"
    measures = (Measure("accuracy", BINARY, "knowledge accuracy", "pp", reference=50.0,
                        reference_label="50 = chance"),
                Measure("margin", CONTINUOUS, "margin d", "nats", digits=3, reference=0.0,
                        reference_label="0 = no preference"))
    scope_titles = {"groups": "Identity"}
    criteria = CRITERIA
    figures = {}
    index_task = "Knowledge of identity words (definitional sentence pairs)"
    training_name = None  # a training run names its folder after the data (`train.benchmarks`)
    held_out_default = None  # definitional pairs are never trained on: the default set is the test

    def summarise(self, rows, settings) -> dict:
        from queerbias.suites.knowledge.figures import knowledge_summary

        return knowledge_summary(rows, settings.margin)

    def headline(self, summary) -> Headline:
        """Accuracy overall and per group; the mean margin and the pair-level gap as extras."""
        overall = summary["overall"]
        gap = summary["pair_gap"]
        return Headline("knowledge accuracy", overall["accuracy"],
                        {group: figures["accuracy"] for group, figures in summary["groups"].items()},
                        {"margin": overall["margin"], "pair_gap": {"margin": gap["margin"], **gap["overall"]}})

    def paired_cells(self, before, after, settings):
        from queerbias.pairs.taxonomy import table_order
        from queerbias.suites.pairs.indifference import gaps

        def cell(scope: str, name: str, mask) -> PairedItems:
            b, a = before[mask], after[mask]
            return PairedItems(scope, name, {"accuracy": (b["biased"].to_numpy(bool), a["biased"].to_numpy(bool)),
                                             "margin": (gaps(b), gaps(a))})

        yield cell(OVERALL, OVERALL, before["group"].notna())
        for group in table_order(set(before["group"])):
            yield cell("groups", group, before["group"] == group)

    def extras(self, before, after, options, settings) -> dict:
        """The change of the pair-level gap |d|, the knowledge side of the specificity ratio."""
        from queerbias.suites.pairs.indifference import gap_extra

        return gap_extra(before, after, settings.margin, options)

    def extra_tables(self, document) -> list:
        from queerbias.suites.pairs.indifference import indifference_tables

        return indifference_tables(document)

    # The pair suite's presentation hooks read bias and soft scores; the knowledge set's measures
    # are accuracy and margin, which the protocol's defaults present.

    def closing_lines(self, documents) -> list[str]:
        """None of its own: the pair suite sets its stereotype |d| against this suite's (specificity)."""
        return []

    def report_tables(self, runs):
        return None

    def report_plot(self, runs, path):
        return None

    def index_metrics(self):
        return Suite.index_metrics(self)

    def card_summary(self, comparison, data, evaluated):
        return None

    def card_blocks(self, document, comparison, evaluated):
        return None

    def card_limitations(self, comparisons):
        return []

    def title(self, summary) -> str:
        meta = summary["meta"]
        return f"Knowledge: {meta['model']['spec']} on {meta['data']['name']}"

    def render(self, summary) -> list:
        from queerbias.suites.knowledge.figures import knowledge_blocks

        return knowledge_blocks(summary)
