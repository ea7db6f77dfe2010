"""GRUFF's declaration: forced-choice pronoun fidelity, its settings, columns, measure and criterion
(light; the implementation is `suites.gruff.suite`).

Rows: one per instance and replicate (items.csv). Figures, standard errors and the
paired tests count each distinct instance once (replicates reuse instances); with
several replicates the summary adds accuracy per replicate set, mean ± SD over the
sets, as the paper reports its three samples. A study may guard with its overall accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from queerbias.options import EXECUTION, auto_or_count, option, seed_option, validate
from queerbias.suites.gruff.forms import PRONOUN_SETS
from queerbias.suites.gruff.generation import SETTINGS, GenerationConfig
from queerbias.suites.protocol import BINARY, OVERALL, Column, Criterion, Declaration, Figure, Judged, Measure

CHANCE = 100 / len(PRONOUN_SETS)


@dataclass(frozen=True)
class GruffSettings:
    """What to generate and how to score it; every field but the batch size changes the items."""

    sample: int | None = option(None, "items per setting and replicate, spread over cases and pronoun sets "
                                      "(default: the paper's balanced set, 2,880 per context setting)", ge=1)
    seed: int = seed_option("sampling seed")
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

    def generation(self) -> GenerationConfig:
        return GenerationConfig(self.settings, self.pairing, self.sample, self.seed, self.replicates)


ITEM_COLUMNS = (
    Column("replicate", int), Column("item_id", str), Column("setting", str), Column("n_distractors", int, True),
    Column("occupation", str), Column("participant", str), Column("case", str), Column("system", str),
    Column("target", str), Column("distractor_system", str, True), Column("distractor", str, True),
    Column("text", str), *(Column(f"score_{p}", float) for p in PRONOUN_SETS), Column("answer", str),
    Column("correct", bool), Column("distractor_error", bool), Column("tie", bool),
)


class Gruff(Declaration):
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
    scope_titles = {"settings": "Setting", "pronouns": "Setting / pronoun set",
                    "pronoun_cases": "Pronoun set / case (settings with an introduction)"}
    criteria = {"highest": Criterion("highest overall accuracy", ("accuracy",), lambda row: (-row["accuracy"],))}
    judged = Judged(guard=Figure(OVERALL, "accuracy"))
    implementation = "queerbias.suites.gruff.suite:GruffSuite"

    def with_scorer_batch(self, settings, sequences):
        """The scorer's batch size: speed only (an execution setting, not part of the run key)."""
        return replace(settings, batch_size=str(sequences))
