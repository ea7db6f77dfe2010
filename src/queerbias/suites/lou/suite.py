"""Lou's two views, implemented: the LM view (`lou`) scores originals and reformulations with the shared
scorer, the classifier view (`lou-classifier`) predicts them with a sequence classifier (the
declarations are `suites.lou.declaration`).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

from queerbias.errors import QueerbiasError
from queerbias.models.context import context_length
from queerbias.options import count_or_auto
from queerbias.scoring.scorer import make_scorer
from queerbias.suites.lou.classifier import INPUT_COMPOSITION, check_labels, classify_chunk, load_classifier
from queerbias.suites.lou.classifier import summarise as classifier_summarise
from queerbias.suites.lou.data import ORIGINAL, POOLED, load_task, lou_spec, resolve_tasks, sample_task
from queerbias.suites.lou.declaration import Lou, LouClassifier
from queerbias.suites.lou.lm_view import PREFERENCE, lm_scoring_config, score_chunk
from queerbias.suites.lou.lm_view import summarise as lm_summarise
from queerbias.suites.lou.tables import classifier_blocks, classifier_plot, data_line, lm_blocks, lm_plot
from queerbias.suites.lou.task_data import describe_task
from queerbias.suites.protocol import OVERALL, DataRef, Headline, PairedItems, Suite
from queerbias.suites.rows import records


def load_lou(spec, settings) -> tuple[list, DataRef]:
    """Every (sampled) instance of the chosen tasks, in task order, and their reference."""
    tasks = [sample_task(load_task(name, spec), settings.sample, settings.seed)
             for name in resolve_tasks(list(settings.tasks), spec)]
    lou = lou_spec()
    checksum = hashlib.sha256("|".join(f"{t.name}:{t.checksum}" for t in tasks).encode()).hexdigest()
    items = [instance for task in tasks for instance in task.instances]
    details = {"licence": lou.licence, "homepage": lou.homepage, "citation": lou.citation,
               "tasks": [t.describe() for t in tasks]}
    return items, DataRef("lou", checksum, len(items), str(spec or "cache"), details)


def _strategies() -> tuple[str, ...]:
    return lou_spec().strategies


def _tasks(rows) -> list[str]:
    return list(dict.fromkeys(rows["task"]))


def _present(rows) -> list[str]:
    """The strategies the rows hold, in the spec's order."""
    found = set(rows["strategy"])
    return [s for s in _strategies() if s in found]


class _LouView(Suite):
    """What the two views share: the data, chunks of instances, one scope per task, and the data line
    under the summary."""

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
        return [data_line(meta)]


class LouLMSuite(Lou, _LouView):
    view = "language-model"

    def texts(self, items):
        """Every original and reformulation: the texts the LM view scores."""
        return list(dict.fromkeys(text for item in items for text in (item.original, *item.reformulations.values())))

    def chunk_rows(self, chunk, settings) -> int:
        return len(chunk) * len(_strategies())  # a row per instance and strategy

    def evaluate(self, lm, chunks, settings):
        scorer = make_scorer(lm, lm_scoring_config(lm.kind), count_or_auto(settings.batch_size))
        limit, memo, strategies = context_length(lm.model, lm.tokenizer), {}, _strategies()
        for chunk in chunks:
            yield score_chunk(scorer, chunk, strategies, limit, memo)

    def run_meta(self, lm, settings) -> dict:
        config = lm_scoring_config(lm.kind)
        return {"scoring": config.to_dict(), "scoring_id": config.scoring_id, "preference": PREFERENCE,
                "position_limit": context_length(lm.model, lm.tokenizer)}

    def summarise(self, rows, settings) -> dict:
        return lm_summarise(records(rows), _tasks(rows), _present(rows), settings.seed, settings.n_resamples)

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
        return lm_blocks(summary)

    def provenance(self, meta) -> list[str]:
        return [*super().provenance(meta),
                f"scoring id `{meta['scoring_id']}`, position limit {meta['position_limit']}"]

    def plot(self, summary, path):
        return lm_plot(summary, path)


class LouClassifierSuite(LouClassifier, _LouView):
    view = "classifier"

    def load_data(self, spec, settings):
        """The instances, and with the data's description Table 5 of every task (App. A.4, `task_data`):
        it describes the task data the paper used (train, dev and the Lou file's originals), not the
        instances a run samples, so it is computed with the data rather than from the rows."""
        items, ref = load_lou(spec, settings)
        tables = {name: describe_task(load_task(name, spec), spec)
                  for name in resolve_tasks(list(settings.tasks), spec)}
        return items, replace(ref, details={**ref.details, "task_data": tables})

    def load_model(self, spec, kind=None, force_kind=False, **options):
        if kind is not None or force_kind:
            raise QueerbiasError("--kind applies to language models, not to sequence classifiers")
        return load_classifier(spec, **options)

    def run_meta(self, lm, settings) -> dict:
        return {"input": INPUT_COMPOSITION}

    def chunk_rows(self, chunk, settings) -> int:
        return len(chunk) * (1 + len(_strategies()))  # a row per instance and version, the original first

    def evaluate(self, lm, chunks, settings):
        spec, checked = lou_spec(), set()
        for chunk in chunks:
            for task in {instance.task for instance in chunk} - checked:
                check_labels(lm, spec.tasks[task])
                checked.add(task)
            yield classify_chunk(lm, chunk, spec.strategies, spec.tasks, settings.max_length, settings.batch_size,
                                 settings.layers)

    def summarise(self, rows, settings) -> dict:
        return classifier_summarise(records(rows), _tasks(rows), _present(rows), settings.seed, settings.n_resamples,
                                    settings.length)

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
        return classifier_blocks(summary)

    def plot(self, summary, path):
        return classifier_plot(summary, path)
