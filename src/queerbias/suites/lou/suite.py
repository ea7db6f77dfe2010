"""Lou's two views as suites: the LM view (`lou`) and the classifier view (`lou-classifier`).

LM view rows: one per instance and strategy, with the length-normalised log-likelihood of
the reformulation minus the original's (Δ). Classifier view rows: one per instance and
text version, with the prediction and whether it flipped. Before/after pairs an
instance's rows by (task, index, strategy); an item missing from one run is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

from queerbias.errors import QueerbiasError
from queerbias.options import EXECUTION, SUMMARY, auto_or_count, count_or_auto, option, validate
from queerbias.suites.protocol import (
    BINARY,
    CONTINUOUS,
    OVERALL,
    Column,
    Criterion,
    DataRef,
    Headline,
    Measure,
    PairedItems,
    Suite,
)

POOLED = "all"  # = lm_view.POOLED
ORIGINAL = "original"  # = data.ORIGINAL
DATA_HELP = ("folder laid out like UKPLab/lou-gender-fair-reformulations (lou/<task>.jsonl, tasks/<task>/...); "
             "omitted: the cache copy, downloaded on first use (CC BY-NC 4.0)")
LICENCE = "CC BY-NC 4.0 (never shipped)"


@dataclass(frozen=True)
class LouSettings:
    tasks: tuple[str, ...] = option((), "tasks (default: all public tasks, or those in the data folder)")
    sample: int | None = option(None, "a seeded sample of N instances per task", ge=1)
    seed: int = option(0, "sampling seed", ge=0)
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
    seed: int = option(0, "sampling seed", ge=0)
    max_length: int = option(300, "GermEval texts: keep their first N tokens, as upstream", ge=8)
    n_resamples: int = option(2_000, "bootstrap resamples of the ΔF1 and flip-rate intervals", role=SUMMARY, ge=1)
    batch_size: int = option(16, "inputs per batch", role=EXECUTION, ge=1)
    chunk_instances: int = option(64, "instances predicted between two saves of progress", role=EXECUTION, ge=1)

    def __post_init__(self):
        validate(self)


def load_lou(spec, settings) -> tuple[list, DataRef]:
    """Every (sampled) instance of the chosen tasks, in task order, and their reference."""
    import hashlib

    from queerbias.suites.lou.data import load_task, lou_spec, resolve_tasks, sample_task

    tasks = [sample_task(load_task(name, spec), settings.sample, settings.seed)
             for name in resolve_tasks(list(settings.tasks), spec)]
    lou = lou_spec()
    checksum = hashlib.sha256("|".join(f"{t.name}:{t.checksum}" for t in tasks).encode()).hexdigest()
    items = [instance for task in tasks for instance in task.instances]
    details = {"licence": lou.licence, "homepage": lou.homepage, "citation": lou.citation,
               "tasks": [t.describe() for t in tasks]}
    return items, DataRef("lou", checksum, len(items), str(spec or "cache"), details)


def _strategies() -> tuple[str, ...]:
    from queerbias.suites.lou.data import lou_spec

    return lou_spec().strategies


def _tasks(rows) -> list[str]:
    return list(dict.fromkeys(rows["task"]))


def _present(rows) -> list[str]:
    """The strategies the rows hold, in the spec's order."""
    found = set(rows["strategy"])
    return [s for s in _strategies() if s in found]


class _LouView(Suite):
    """What the two views share: the data, chunks of instances, items keyed by task, index and
    strategy, one scope per task, and the data line under the summary."""

    data_help = DATA_HELP
    licence = LICENCE
    key_columns = ("task", "index", "strategy")
    view = ""

    def load_data(self, spec, settings):
        return load_lou(spec, settings)

    def chunk_size(self, settings) -> int:
        return settings.chunk_instances

    def task_cells(self, before, cell):
        """One entry per task (scope) and strategy present."""
        for task in _tasks(before):
            for strategy in _present(before):
                mask = (before["task"] == task) & (before["strategy"] == strategy)
                if mask.any():
                    yield cell(task, strategy, mask)

    def title(self, summary) -> str:
        return f"Lou, {self.view} view: {summary['meta']['model']['spec']}"

    def provenance(self, meta) -> list[str]:
        from queerbias.suites.lou.report import data_line

        return [data_line(meta)]


class LouLMSuite(_LouView):
    name = "lou"
    description = "Lou, LM view: does the model find gender-fair German reformulations as likely as the original?"
    view = "language-model"
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

    def evaluate(self, lm, chunks, settings):
        from queerbias.models.context import context_length
        from queerbias.scoring.families import make_scorer
        from queerbias.suites.lou.lm_view import lm_scoring_config, score_chunk

        scorer = make_scorer(lm, lm_scoring_config(lm.kind), count_or_auto(settings.batch_size))
        limit, memo, strategies = context_length(lm.model, lm.tokenizer), {}, _strategies()
        for chunk in chunks:
            yield score_chunk(scorer, chunk, strategies, limit, memo)

    def run_meta(self, lm, settings) -> dict:
        from queerbias.models.context import context_length
        from queerbias.suites.lou.lm_view import PREFERENCE, lm_scoring_config

        config = lm_scoring_config(lm.kind)
        return {"scoring": config.to_dict(), "scoring_id": config.scoring_id, "preference": PREFERENCE,
                "position_limit": context_length(lm.model, lm.tokenizer)}

    def summarise(self, rows, settings) -> dict:
        from queerbias.suites.lou.lm_view import summarise
        from queerbias.suites.rows import records

        return summarise(records(rows), _tasks(rows), _present(rows), settings.seed, settings.n_resamples)

    def headline(self, summary) -> Headline:
        pooled = {strategy: entry["preference"] for strategy, entry in summary[POOLED].items()}
        known = [v for v in pooled.values() if v is not None]
        return Headline("reformulation preferred (%)", sum(known) / len(known) if known else None, pooled)

    def paired_cells(self, before, after, settings):
        # a text pair counts where both runs compared it (neither identical nor too long)
        keep = before["delta"].notna() & after["delta"].notna()
        before, after = before[keep], after[keep]

        def cell(scope: str, name: str, mask) -> PairedItems:
            b, a = before.loc[mask, "delta"].to_numpy(float), after.loc[mask, "delta"].to_numpy(float)
            return PairedItems(scope, name, {"ll": (b, a), "pref": (b > 0, a > 0)})

        distinct = ~before.duplicated(["strategy", "pair_key"])  # the GermEval tasks share their texts
        yield cell(OVERALL, OVERALL, distinct)
        for strategy in _present(before):
            if ((before["strategy"] == strategy) & distinct).any():
                yield cell(POOLED, strategy, (before["strategy"] == strategy) & distinct)
        yield from self.task_cells(before, cell)

    def render(self, summary) -> list:
        from queerbias.suites.lou.report import lm_blocks

        return lm_blocks(summary)

    def provenance(self, meta) -> list[str]:
        return [*super().provenance(meta),
                f"scoring id `{meta['scoring_id']}`, position limit {meta['position_limit']}"]

    def plot(self, summary, path):
        from queerbias.suites.lou.report import lm_plot

        return lm_plot(summary, path)


class LouClassifierSuite(_LouView):
    name = "lou-classifier"
    description = "Lou, classifier view: do a classifier's predictions flip under gender-fair reformulation?"
    view = "classifier"
    Settings = LouClassifierSettings
    columns = (Column("task", str), Column("index", int), Column("label", int), Column("strategy", str),
               Column("identical", bool), Column("pred", int), Column("prob_max", float), Column("flipped", bool),
               *(Column(name, kind, True, optional=True) for name, kind in (
                   ("words", int), ("flesch", float), ("tokens", int), ("attention_max_original", float),
                   ("attention_sd_original", float), ("attention_max", float), ("attention_sd", float))))
    text_columns = ("label",)
    summary_keys = ("tasks",)
    measures = (Measure("flip", BINARY, "label flips", "pp", digits=1),
                Measure("acc", BINARY, "accuracy on the reformulation", "pp", digits=1))
    criteria = {"lowest": Criterion("fewest label flips", ("flip",), lambda row: (row["flip"],))}
    no_training_reason = "it evaluates sequence classifiers, not the language model being trained"

    def load_model(self, spec, kind=None, force_kind=False, **options):
        from queerbias.suites.lou.classifier import load_classifier

        if kind is not None or force_kind:
            raise QueerbiasError("--kind applies to language models, not to sequence classifiers")
        return load_classifier(spec, **options)

    def run_meta(self, lm, settings) -> dict:
        from queerbias.suites.lou.classifier import INPUT_COMPOSITION

        return {"input": INPUT_COMPOSITION}

    def evaluate(self, lm, chunks, settings):
        from queerbias.suites.lou.classifier import check_labels, classify_chunk
        from queerbias.suites.lou.data import lou_spec

        spec, checked = lou_spec(), set()
        for chunk in chunks:
            for task in {instance.task for instance in chunk} - checked:
                check_labels(lm, spec.tasks[task])
                checked.add(task)
            yield classify_chunk(lm, chunk, spec.strategies, spec.tasks, settings.max_length, settings.batch_size)

    def summarise(self, rows, settings) -> dict:
        from queerbias.suites.lou.classifier import summarise
        from queerbias.suites.rows import records

        return summarise(records(rows), _tasks(rows), _present(rows), settings.seed, settings.n_resamples)

    def headline(self, summary) -> Headline:
        flips = {f"{task}/{strategy}": entry["flip_rate"] for task, entries in summary["tasks"].items()
                 for strategy, entry in entries.items() if strategy != ORIGINAL}
        return Headline("label flips (%)", sum(flips.values()) / len(flips) if flips else None, flips)

    def paired_cells(self, before, after, settings):
        keep = before["strategy"] != ORIGINAL  # the original cannot flip
        before, after = before[keep], after[keep]

        def cell(scope: str, name: str, mask) -> PairedItems:
            b, a = before[mask], after[mask]
            return PairedItems(scope, name, {"flip": (b["flipped"].to_numpy(bool), a["flipped"].to_numpy(bool)),
                                             "acc": ((b["pred"] == b["label"]).to_numpy(bool),
                                                     (a["pred"] == a["label"]).to_numpy(bool))})

        yield cell(OVERALL, OVERALL, before["task"].notna())
        yield from self.task_cells(before, cell)

    def render(self, summary) -> list:
        from queerbias.suites.lou.report import classifier_blocks

        return classifier_blocks(summary)

    def plot(self, summary, path):
        from queerbias.suites.lou.report import classifier_plot

        return classifier_plot(summary, path)
