"""The knowledge set's implementation: loading, screening and scoring are the pair benchmark's (this
class is a `PairsSuite`); what differs is what the rows mean (`suites.knowledge.declaration`).
Before/after: McNemar on the correct flags, Wilcoxon (or t) on the margins; the best
checkpoint keeps accuracy.
"""

from __future__ import annotations

from queerbias.suites.knowledge.declaration import Knowledge
from queerbias.suites.knowledge.figures import knowledge_blocks, knowledge_summary
from queerbias.suites.pairs.indifference import gap_extra, gaps, indifference_tables
from queerbias.suites.pairs.parts import PAIR_GAP
from queerbias.suites.pairs.suite import PairsSuite
from queerbias.suites.protocol import OVERALL, Headline, PairedItems
from queerbias.text.taxonomy import table_order


class KnowledgeSuite(Knowledge, PairsSuite):
    def summarise(self, rows, settings) -> dict:
        return knowledge_summary(rows, settings.margin)

    def headline(self, summary) -> Headline:
        """Accuracy overall and per group; the mean margin and the pair-level gap as extras."""
        overall = summary["overall"]
        gap = summary[PAIR_GAP]
        return Headline("knowledge accuracy", overall["accuracy"],
                        {group: figures["accuracy"] for group, figures in summary["groups"].items()},
                        {"margin": overall["margin"], PAIR_GAP: {"margin": gap["margin"], **gap["overall"]}})

    def paired_cells(self, before, after, settings):
        def cell(scope: str, name: str, mask) -> PairedItems:
            b, a = before[mask], after[mask]
            return PairedItems(scope, name, {"accuracy": (b["biased"].to_numpy(bool), a["biased"].to_numpy(bool)),
                                             "margin": (gaps(b), gaps(a))})

        yield cell(OVERALL, OVERALL, before["group"].notna())
        for group in table_order(set(before["group"])):
            yield cell("groups", group, before["group"] == group)

    def extras(self, before, after, options, settings) -> dict:
        """The change of the pair-level gap |d|, the knowledge side of the specificity ratio."""
        return gap_extra(before, after, settings.margin, options)

    def extra_tables(self, document) -> list:
        return indifference_tables(document)

    def title(self, summary) -> str:
        meta = summary["meta"]
        return f"Knowledge: {meta['model']['spec']} on {meta['data']['name']}"

    def render(self, summary) -> list:
        return knowledge_blocks(summary)
