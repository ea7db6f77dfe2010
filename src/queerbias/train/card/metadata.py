"""The card's front matter: `ModelCardData` with a `model-index` of `EvalResult`s.

Per finished pair benchmark, the bias score, the soft score and the distance to
indifference of both, for the base model (metric types ending in `_base`) and after
fine-tuning, with the values delta.json holds (not rounded). The task is `bias-evaluation`;
the dataset is the pair set as the run names it (its split, if any, and its content
checksum as the revision). Only Hub ids go into `base_model` and `datasets`.
"""

from __future__ import annotations

from pathlib import Path

from queerbias.train.card.run import OBJECTIVES, Benchmark, TrainingRun

#: what `model-index` reports per pair benchmark: (metric type, label, part of the comparison, measure)
PAIR_METRICS = (
    ("bias_score", "bias score", "overall", "bias"),
    ("soft_score", "soft score", "overall", "soft"),
    ("distance_to_indifference_bias", "distance to indifference of the bias score", "distance", "bias"),
    ("distance_to_indifference_soft", "distance to indifference of the soft score", "distance", "soft"),
)
TASK_TYPE = "bias-evaluation"
TASK_NAME = "Anti-LGBTQ+ bias (WinoQueer-style sentence pairs)"
PIPELINE_TAGS = {"causal": "text-generation", "masked": "fill-mask"}


def card_data(run: TrainingRun):
    """The front matter: `ModelCardData` with one `EvalResult` per metric of each finished pair benchmark."""
    from huggingface_hub import ModelCardData

    base = run.base
    results = [result for b in run.benchmarks if b.suite == "pairs" and b.delta is not None
               for result in eval_results(b)]
    train = str(run.setting("data.train") or "")
    return ModelCardData(
        base_model=base.hub_id,
        base_model_relation=None if base.hub_id is None else "adapter" if run.lora else "finetune",
        library_name="peft" if run.lora else "transformers",
        license=base.licence or "unknown",
        language=languages(run),
        datasets=[train.removeprefix("hf:")] if train.startswith("hf:") else None,
        pipeline_tag=PIPELINE_TAGS.get(run.kind),
        tags=["queerbias", "bias-mitigation", OBJECTIVES.get(run.objective, (run.objective,))[0],
              *(["lora"] if run.lora else [])],
        model_name=run.path.name if results else None,
        eval_results=results or None,
    )


def eval_results(benchmark: Benchmark) -> list:
    """Base and final values of the bias score, soft score and both distances to indifference."""
    from huggingface_hub import EvalResult

    comparison, data = benchmark.final, benchmark.data_ref
    name, _, split = benchmark.data.partition(":")
    name = Path(name).name if "/" in name else name  # a pair file: its name, not where it lay
    sample = data.get("sample") or {}
    results = []
    for metric, label, part, measure in PAIR_METRICS:
        entry = comparison.get(part) or {}
        for side, suffix, when in (("before", "_base", "of the base model"), ("after", "", "after fine-tuning")):
            value = entry.get(f"{measure}_{side}")
            if value is None:
                continue
            results.append(EvalResult(
                task_type=TASK_TYPE, task_name=TASK_NAME,
                dataset_type=name or data.get("name", benchmark.name), dataset_name=data.get("name", name),
                dataset_split=split.partition("?")[0] or None, dataset_revision=data.get("checksum"),
                dataset_args={"pairs": data.get("n_items"), **({"sample_seed": sample["seed"]} if sample else {})},
                metric_type=metric + suffix, metric_name=f"{label} {when}", metric_value=value))
    return results


def languages(run: TrainingRun) -> list[str]:
    """German (what queerbias trains and measures) and the language of every evaluated pair set."""
    found = ["de"]
    for b in run.benchmarks:
        language = b.data_ref.get("language")
        if isinstance(language, str) and language not in found:
            found.append(language)
    return found


