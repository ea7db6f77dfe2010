"""GRUFF's implementation: instances generated from the templates, scored by the shared scorer, the
paper's metrics over distinct instances (the declaration is `suites.gruff.declaration`)."""

from __future__ import annotations

from queerbias.options import count_or_auto
from queerbias.scoring.scorer import make_scorer
from queerbias.suites.gruff import metrics
from queerbias.suites.gruff.declaration import Gruff
from queerbias.suites.gruff.forms import CASES, PRONOUN_SETS
from queerbias.suites.gruff.generation import SETTINGS, generate
from queerbias.suites.gruff.metrics import comparison_extras, distinct
from queerbias.suites.gruff.scoring import METHOD, item_rows, score_options, scoring_config
from queerbias.suites.gruff.tables import (
    accuracy_lines,
    model_correlation_table,
    pronoun_case_change_table,
    summary_blocks,
)
from queerbias.suites.gruff.templates import load_templates
from queerbias.suites.protocol import OVERALL, DataRef, Headline, PairedItems, Suite


class GruffSuite(Gruff, Suite):
    def texts(self, items):
        """Every sentence an instance shows the model: its context sentences and its task sentence
        with each pronoun in the gap."""
        return list(dict.fromkeys(sentence for item in items for sentence in (*item.context, *item.tasks())))

    def load_data(self, spec, settings):
        templates = load_templates(spec)
        generation = settings.generation()
        items = generate(templates, generation)
        return items, DataRef("gruff", templates.checksum, len(items), templates.source,
                              {"templates": templates.describe(), "generation": generation.to_dict()})

    def chunk_size(self, settings) -> int:
        return settings.chunk_items

    def evaluate(self, lm, chunks, settings):
        scorer = make_scorer(lm, scoring_config(lm, settings.bos), count_or_auto(settings.batch_size))
        for chunk in chunks:
            yield item_rows(chunk, score_options(scorer, chunk, progress=False, chunk=len(chunk)))

    def run_meta(self, lm, settings) -> dict:
        config = scoring_config(lm, settings.bos)
        return {"scoring": {**config.to_dict(), "method": METHOD}, "scoring_id": config.scoring_id}

    def summarise(self, rows, settings) -> dict:
        summary = metrics.summarise(distinct(rows))
        summary["n_rows"] = len(rows)
        if settings.replicates > 1:
            summary["replicates"] = metrics.replicate_figures(rows)
        return summary

    def headline(self, summary) -> Headline:
        return Headline("accuracy", summary["overall"]["accuracy"],
                        {setting: figures["accuracy"] for setting, figures in summary["settings"].items()})

    def paired_cells(self, before, after, settings):
        keep = distinct(before).index  # each instance once, in both runs (aligned rows)
        before, after = before.loc[keep], after.loc[keep]

        def cell(scope: str, name: str, mask) -> PairedItems:
            return PairedItems(scope, name, {"accuracy": (before.loc[mask, "correct"].to_numpy(bool),
                                                          after.loc[mask, "correct"].to_numpy(bool))})

        yield cell(OVERALL, OVERALL, before["correct"].notna())
        for setting in SETTINGS:
            if (before["setting"] == setting).any():
                yield cell("settings", setting, before["setting"] == setting)
        for setting in SETTINGS:
            for pronoun in PRONOUN_SETS:
                mask = (before["setting"] == setting) & (before["target"] == pronoun)
                if mask.any():
                    yield cell("pronouns", f"{setting} {pronoun}", mask)
        introduced = before["setting"] != "none"  # Fig. 5's pool: the settings with an introduction
        for pronoun in PRONOUN_SETS:
            for case in CASES:
                mask = introduced & (before["target"] == pronoun) & (before["case"] == case)
                if mask.any():
                    yield cell("pronoun_cases", f"{pronoun} {case}", mask)

    def extras(self, before, after, options, settings) -> dict:
        """Paper Figs. 8, 12-14: Spearman correlation of the two models' stereotype scores per case;
        Fig. 5 of both models."""
        return comparison_extras(distinct(before), distinct(after))

    def extra_tables(self, document) -> list:
        return [model_correlation_table(document), pronoun_case_change_table(document)]

    def title(self, summary) -> str:
        return f"GRUFF pronoun fidelity: {summary['meta']['model']['spec']}"

    def render(self, summary) -> list:
        return summary_blocks(summary)

    def provenance(self, meta) -> list[str]:
        templates = meta["data"]["templates"]
        return [f"templates: `{templates['checksum']}` ({templates['n_task']} task, {templates['n_context']} "
                f"context templates from {templates['source']})",
                f"scoring: {meta['scoring']['method']}; bos {meta['scoring']['bos']} (scoring id `{meta['scoring_id']}`)"]

    def plot(self, summary, path):
        return accuracy_lines([(f"GRUFF accuracy: {summary['meta']['model']['spec']}",
                                [(summary["meta"]["model"]["spec"], summary["settings"])])], path)
