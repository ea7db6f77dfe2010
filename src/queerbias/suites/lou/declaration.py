"""Lou's two views as declarations: the LM view (`lou`) and the classifier view (`lou-classifier`),
their settings, columns, measures and criteria (light; the implementation is `suites.lou.suite`).

LM view rows: one per instance and strategy, with the length-normalised log-likelihood of
the reformulation minus the original's (Δ). Classifier view rows: one per instance and
text version, with the prediction and whether it flipped. Before/after pairs an
instance's rows by (task, index, strategy); an item missing from one run is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from queerbias.options import EXECUTION, SUMMARY, auto_or_count, option, seed_option, validate
from queerbias.suites.lou.data import POOLED
from queerbias.suites.protocol import (
    BINARY,
    CONTINUOUS,
    OVERALL,
    Column,
    Criterion,
    Declaration,
    Figure,
    Judged,
    Measure,
)

DATA_HELP = ("folder laid out like UKPLab/lou-gender-fair-reformulations (lou/<task>.jsonl, tasks/<task>/...); "
             "omitted: the cache copy, downloaded on first use (CC BY-NC 4.0)")
LICENCE = "CC BY-NC 4.0 (never shipped)"


@dataclass(frozen=True)
class LouSettings:
    tasks: tuple[str, ...] = option((), "tasks (default: all public tasks, or those in the data folder)")
    sample: int | None = option(None, "a seeded sample of N instances per task", ge=1)
    seed: int = seed_option("sampling seed")
    n_resamples: int = option(10_000, "bootstrap resamples of the intervals", role=SUMMARY, ge=1)
    batch_size: str = option("auto", "sequences per batch, or auto", role=EXECUTION, check=auto_or_count)
    chunk_instances: int = option(32, "instances scored between two saves of progress", role=EXECUTION, ge=1)

    def __post_init__(self):
        validate(self)


@dataclass(frozen=True)
class LouClassifierSettings:
    tasks: tuple[str, ...] = option((), "the task the classifier was trained for (default: every task in the "
                                        "data folder)")
    sample: int | None = option(None, "a seeded sample of N instances per task", ge=1)
    seed: int = seed_option("sampling seed")
    max_length: int = option(300, "GermEval texts: keep their first N tokens, as upstream", ge=8)
    n_resamples: int = option(2_000, "bootstrap resamples of the ΔF1 and flip-rate intervals", role=SUMMARY, ge=1)
    layers: bool = option(False, "Sec. 6 i: keep each reformulation's layer-wise mean embedding difference r = s - s' "
                                 "(layers × hidden size numbers per row: a large items file) and cluster r by "
                                 "strategy per layer", role=SUMMARY)
    length: str = option("words", "what a text's length is counted in (Sec. 6 ii-iii): words, as Table 5 counts it, "
                                  "or the classifier's tokens", role=SUMMARY, choices=("words", "tokens"))
    batch_size: int = option(16, "inputs per batch", role=EXECUTION, ge=1)
    chunk_instances: int = option(64, "instances predicted between two saves of progress", role=EXECUTION, ge=1)

    def __post_init__(self):
        validate(self)


class _LouData(Declaration):
    """What the two views share: the data, and items keyed by task, index and strategy."""

    data_help = DATA_HELP
    licence = LICENCE
    key_columns = ("task", "index", "strategy")


class Lou(_LouData):
    name = "lou"
    description = "Lou, LM view: does the model find gender-fair German reformulations as likely as the original?"
    Settings = LouSettings
    columns = (
        Column("task", str), Column("index", int), Column("label", int), Column("strategy", str),
        Column("pair_key", str), Column("identical", bool), Column("too_long", bool), Column("tokens_original", int),
        Column("tokens_reformulated", int), Column("score_original", float, True),
        Column("score_reformulated", float, True), Column("delta", float, True), Column("preferred", bool, True),
        Column("score_original_sum", float, True), Column("score_reformulated_sum", float, True),
        Column("delta_sum", float, True),
    )
    text_columns = ("pair_key",)
    summary_keys = ("tasks", POOLED)
    measures = (Measure("ll", CONTINUOUS, "Δ log-likelihood per token (reformulation − original)", digits=3),
                Measure("pref", BINARY, "reformulation preferred", "pp", digits=1, reference=50.0,
                        reference_label="50 = no preference"))
    scope_titles = {POOLED: "Strategy (all tasks)"}
    criteria = {"closest50": Criterion("share preferring the reformulation closest to 50 (no preference)", ("pref",),
                                       lambda row: (abs(row["pref"] - 50.0),))}
    compatible = (("scoring method (scoring_id)", ("scoring_id",)),)
    judged = Judged(guard=Figure(OVERALL, "ll"))
    implementation = "queerbias.suites.lou.suite:LouLMSuite"

    def with_scorer_batch(self, settings, sequences):
        """The scorer's batch size: speed only (an execution setting, not part of the run key)."""
        return replace(settings, batch_size=str(sequences))


class LouClassifier(_LouData):
    name = "lou-classifier"
    description = "Lou, classifier view: do a classifier's predictions flip under gender-fair reformulation?"
    Settings = LouClassifierSettings
    columns = (Column("task", str), Column("index", int), Column("label", int), Column("strategy", str),
               Column("identical", bool), Column("pred", int), Column("prob_max", float), Column("flipped", bool),
               *(Column(name, kind, True, optional=True) for name, kind in (
                   ("words", int), ("flesch", float), ("tokens", int), ("attention_max_original", float),
                   ("attention_sd_original", float), ("attention_max", float), ("attention_sd", float),
                   ("reformulation_layers", object))))
    text_columns = ("label",)
    summary_keys = ("tasks",)
    measures = (Measure("flip", BINARY, "label flips", "pp", digits=1),
                Measure("acc", BINARY, "accuracy on the reformulation", "pp", digits=1))
    criteria = {"lowest": Criterion("fewest label flips", ("flip",), lambda row: (row["flip"],))}
    no_training_reason = "it evaluates sequence classifiers, not the language model being trained"
    no_texts_reason = "it evaluates sequence classifiers, never a model a training run trains"
    implementation = "queerbias.suites.lou.suite:LouClassifierSuite"
