"""The card's front matter: `ModelCardData` with a `model-index` of `EvalResult`s.

Per finished benchmark, what its suite's card companion reports (`CardHooks.index_metrics`: the pair suite's
bias score, soft score and the distance to indifference of both; another suite's
measures overall), for the base model (metric types ending in `_base`) and after
fine-tuning, with the values delta.json holds (not rounded). The task is `bias-evaluation`
named by the companion (`CardHooks.index_task`); the dataset is the data as the run names it (its
split, if any, and its content checksum as the revision). Only Hub ids go into
`base_model` and `datasets`.
"""

from __future__ import annotations

from pathlib import Path

from huggingface_hub import EvalResult, ModelCardData

from queerbias import families
from queerbias.suites.registry import companion, get_declaration
from queerbias.train.card.run import Benchmark, TrainingRun

TASK_TYPE = "bias-evaluation"


def card_data(run: TrainingRun):
    """The front matter: `ModelCardData` with one `EvalResult` per metric of each finished benchmark."""
    base = run.base
    results = [result for b in run.benchmarks if b.delta is not None for result in eval_results(b)]
    train = str(run.setting("data.train") or "")
    return ModelCardData(
        base_model=base.hub_id,
        base_model_relation=None if base.hub_id is None else "adapter" if run.lora else "finetune",
        library_name="peft" if run.lora else "transformers",
        license=base.licence or "unknown",
        language=languages(run),
        datasets=[train.removeprefix("hf:")] if train.startswith("hf:") else None,
        pipeline_tag=families.get_family(run.kind).pipeline_tag if run.kind in families.names() else None,
        tags=["queerbias", "bias-mitigation", run.declared.tag if run.declared else run.objective,
              *(["lora"] if run.lora else [])],
        model_name=run.path.name if results else None,
        eval_results=results or None,
    )


def eval_results(benchmark: Benchmark) -> list:
    """Base and final values of every metric the benchmark's suite reports."""
    suite, card = get_declaration(benchmark.suite), companion(benchmark.suite, "card")
    comparison, data = benchmark.final, benchmark.data_ref
    name, _, split = benchmark.data.partition(":")
    name = Path(name).name if "/" in name else name  # a file or folder: its name, not where it lay
    sample = data.get("sample") or {}
    results = []
    for metric in card.index_metrics(suite):
        entry = comparison.get(metric.part) or {}
        for side, suffix, when in (("before", "_base", "of the base model"), ("after", "", "after fine-tuning")):
            value = entry.get(f"{metric.measure}_{side}")
            if value is None:
                continue
            results.append(EvalResult(
                task_type=TASK_TYPE, task_name=card.index_task or suite.description,
                dataset_type=name or data.get("name", benchmark.name), dataset_name=data.get("name", name),
                dataset_split=split.partition("?")[0] or None, dataset_revision=data.get("checksum"),
                dataset_args={suite.items_name: data.get("n_items"),
                              **({"sample_seed": sample["seed"]} if sample else {})},
                metric_type=metric.type + suffix, metric_name=f"{metric.label} {when}", metric_value=value))
    return results


def languages(run: TrainingRun) -> list[str]:
    """German (what queerbias trains and measures) and the language of every evaluated pair set."""
    found = ["de"]
    for b in run.benchmarks:
        language = b.data_ref.get("language")
        if isinstance(language, str) and language not in found:
            found.append(language)
    return found


