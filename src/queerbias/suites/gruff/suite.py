"""GRUFF as a suite: forced-choice pronoun fidelity, scored by the shared scorer.

Rows: one per instance and replicate (items.csv). Figures, standard errors and the
paired tests count each distinct instance once (replicates reuse instances); with
several replicates the summary adds accuracy per replicate set, mean ± SD over the
sets, as the paper reports its three samples.
"""

from __future__ import annotations

from dataclasses import dataclass

from queerbias.options import EXECUTION, auto_or_count, count_or_auto, option, validate
from queerbias.suites.gruff.forms import PRONOUN_SETS
from queerbias.suites.gruff.generation import SETTINGS
from queerbias.suites.protocol import (
    BINARY,
    OVERALL,
    Column,
    Criterion,
    DataRef,
    Headline,
    Measure,
    PairedItems,
    Suite,
)

CHANCE = 100 / len(PRONOUN_SETS)


@dataclass(frozen=True)
class GruffSettings:
    """What to generate and how to score it; every field but the batch size changes the items."""

    sample: int | None = option(None, "items per setting and replicate, spread over cases and pronoun sets "
                                      "(default: the paper's balanced set, 2,880 per context setting)", ge=1)
    seed: int = option(0, "sampling seed", ge=0)
    replicates: int = option(1, "independent balanced samples (the paper: 3)", ge=1)
    settings: tuple[str, ...] = option(SETTINGS, "none = no context, d0 = introduction only, d1-d5 = distractor "
                                                 "sentences", choices=SETTINGS)
    pairing: str = option("default", "default: en with De-e nouns, xier with Sternchen nouns; swapped exchanges "
                                     "them", choices=("default", "swapped"))
    bos: str = option("auto", "causal LMs: score after a BOS token; auto does what the tokenizer does, as the "
                              "paper's script", choices=("auto", "prepend", "none"))
    batch_size: str = option("auto", "sequences per batch, or auto", role=EXECUTION, check=auto_or_count)
    chunk_items: int = option(256, "instances scored between two saves of progress", role=EXECUTION, ge=1)

    def __post_init__(self):
        validate(self)
        self.generation()  # validates settings, pairing and replicates

    def generation(self):
        from queerbias.suites.gruff.generation import GenerationConfig

        return GenerationConfig(self.settings, self.pairing, self.sample, self.seed, self.replicates)


ITEM_COLUMNS = (
    Column("replicate", int), Column("item_id", str), Column("setting", str), Column("n_distractors", int, True),
    Column("occupation", str), Column("participant", str), Column("case", str), Column("system", str),
    Column("target", str), Column("distractor_system", str, True), Column("distractor", str, True),
    Column("text", str), *(Column(f"score_{p}", float) for p in PRONOUN_SETS), Column("answer", str),
    Column("correct", bool), Column("distractor_error", bool), Column("tie", bool),
)


class GruffSuite(Suite):
    name = "gruff"
    description = "GRUFF: does the model reuse a person's pronoun (er, sie, en, xier) after sentences about someone else?"
    Settings = GruffSettings
    data_help = "folder with the GRUFF task.tsv and context.tsv; omitted: downloaded from TAI-HAMBURG/gruff"
    licence = "templates: no licence upstream (never shipped); our German forms: MIT"
    columns = ITEM_COLUMNS
    key_columns = ("replicate", "item_id")
    text_columns = ("text",)
    summary_keys = ("overall", "introduced", "settings")
    measures = (Measure("accuracy", BINARY, "accuracy", "pp", digits=1, reference=CHANCE,
                        reference_label="chance (25%)"),)
    scope_titles = {"settings": "Setting", "pronouns": "Setting / pronoun set"}
    criteria = {"highest": Criterion("highest overall accuracy", ("accuracy",), lambda row: (-row["accuracy"],))}

    def load_data(self, spec, settings):
        from queerbias.suites.gruff.generation import generate
        from queerbias.suites.gruff.templates import load_templates

        templates = load_templates(spec)
        generation = settings.generation()
        items = generate(templates, generation)
        return items, DataRef("gruff", templates.checksum, len(items), templates.source,
                              {"templates": templates.describe(), "generation": generation.to_dict()})

    def chunk_size(self, settings) -> int:
        return settings.chunk_items

    def evaluate(self, lm, chunks, settings):
        from queerbias.scoring.families import make_scorer
        from queerbias.suites.gruff.scoring import item_rows, score_options, scoring_config

        scorer = make_scorer(lm, scoring_config(lm, settings.bos), count_or_auto(settings.batch_size))
        for chunk in chunks:
            yield item_rows(chunk, score_options(scorer, chunk, progress=False, chunk=len(chunk)))

    def run_meta(self, lm, settings) -> dict:
        from queerbias.suites.gruff.scoring import METHOD, scoring_config

        config = scoring_config(lm, settings.bos)
        return {"scoring": {**config.to_dict(), "method": METHOD}, "scoring_id": config.scoring_id}

    def summarise(self, rows, settings) -> dict:
        from queerbias.suites.gruff import metrics

        summary = metrics.summarise(metrics.distinct(rows))
        summary["n_rows"] = len(rows)
        if settings.replicates > 1:
            summary["replicates"] = metrics.replicate_figures(rows)
        return summary

    def headline(self, summary) -> Headline:
        return Headline("accuracy", summary["overall"]["accuracy"],
                        {setting: figures["accuracy"] for setting, figures in summary["settings"].items()})

    def paired_cells(self, before, after, settings):
        from queerbias.suites.gruff.metrics import distinct

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

    def extras(self, before, after, options, settings) -> dict:
        """Paper Figs. 8, 12-14: Spearman correlation of the two models' stereotype scores per case;
        Fig. 5 of both models."""
        from queerbias.suites.gruff.metrics import comparison_extras, distinct

        return comparison_extras(distinct(before), distinct(after))

    def extra_tables(self, document) -> list:
        from queerbias.suites.gruff.report import model_correlation_table, pronoun_case_change_table

        return [model_correlation_table(document), pronoun_case_change_table(document)]

    def title(self, summary) -> str:
        return f"GRUFF pronoun fidelity: {summary['meta']['model']['spec']}"

    def render(self, summary) -> list:
        from queerbias.suites.gruff.report import summary_blocks

        return summary_blocks(summary)

    def provenance(self, meta) -> list[str]:
        templates = meta["data"]["templates"]
        return [f"templates: `{templates['checksum']}` ({templates['n_task']} task, {templates['n_context']} "
                f"context templates from {templates['source']})",
                f"scoring: {meta['scoring']['method']}; bos {meta['scoring']['bos']} (scoring id `{meta['scoring_id']}`)"]

    def plot(self, summary, path):
        from queerbias.suites.gruff.report import accuracy_lines

        return accuracy_lines([(f"GRUFF accuracy: {summary['meta']['model']['spec']}",
                                [(summary["meta"]["model"]["spec"], summary["settings"])])], path)
