"""One training run, start to finish: the same code for 1 CPU process, GPUs and nodes.

Order: resolve the benchmarks, load the training pairs and refuse evaluation pairs that
overlap them (before any model loads), prepare the corpus (targeted documents,
counterfactual copies), check the run folder (resume from the last complete checkpoint),
load the base model, score it as step 0 (`RUN/base/`; `eval.base_from` shares it between the
runs of one model, `train.shared_base`), attach the adapter, train with
checkpoint evaluation under the configured objective, save the adapter or model
(`RUN/final/`, merged into `RUN/merged/` on request) and compare base against every
checkpoint (`RUN/compare/`).

The trainer is transformers' own `Trainer` with our callbacks (`lm`, `cda`), its subclass
with the pair loss (`equalise`), or TRL's `DPOTrainer` (`dpo`); see `train.objectives`.
"""

from __future__ import annotations

import copy
import hashlib
import logging
from pathlib import Path

import torch
from transformers import (
    PrinterCallback,
    ProgressCallback,
    Trainer,
    TrainerControl,
    TrainingArguments,
)

from queerbias.distributed import process_state
from queerbias.errors import QueerbiasError
from queerbias.models.context import context_length
from queerbias.suites.pairs.indifference import closing_clauses, specificity_lines
from queerbias.train import checkpoints
from queerbias.train.callbacks import CheckpointEvaluation, Progress, summary_line
from queerbias.train.card import write_card
from queerbias.train.config import TrainConfig, save_config
from queerbias.train.data import (
    build_dataset,
    general_texts,
    make_collator,
    read_texts,
    resolve_validation,
    tokenize,
)
from queerbias.train.evaluation import evaluate, load_benchmark_data
from queerbias.train.guards import NonFiniteGuard
from queerbias.train.modeling import (
    attach_adapter,
    honours_num_items_in_batch,
    load_base,
)
from queerbias.train.objectives.cda import prepare_corpus
from queerbias.train.objectives.pairs import evaluation_pairs, load_training_pairs, overlap_record
from queerbias.train.precision import resolve_precision
from queerbias.train.shared_base import score_base
from queerbias.yamlio import load_yaml_mapping

log = logging.getLogger(__name__)

CONFIG_NAME = "config.yaml"
#: pair set that mitigation objectives are judged on when a pairs benchmark names none
HELD_OUT_DEFAULT = "queerbias-de:test"


def run_training(config: TrainConfig) -> dict:
    """Train (or resume) the configured run; returns paths and the final metrics."""
    state = process_state()
    config, skipped = resolve_benchmarks(config)
    run_dir = Path(config.output_dir)
    if config.threads:
        torch.set_num_threads(config.threads)
    raw_texts = None if config.objective == "dpo" else read_texts(config.data.train, config.data, "train",
                                                                  config.data.max_train_docs)
    training_pairs = load_training_pairs(config, raw_texts)
    data = load_benchmark_data(config)
    held_out = training_pairs and overlap_record(config, training_pairs, evaluation_pairs(config, data))
    if config.objective == "dpo":
        _require_causal(config)
        texts, corpus = None, None
    else:
        texts, corpus = prepare_corpus(config, raw_texts)
    general = general_texts() if config.eval.general_perplexity else None
    record = {key: value for key, value in {
        "objective": config.objective, "precision": resolve_precision(config.precision),
        "held_out": held_out, "corpus": corpus,
        "targeted_groups": config.data.identities, "skipped_benchmarks": skipped,
        "general_text": general and {"documents": len(general), "checksum": _checksum(general)},
    }.items() if value}
    resume = _prepare_run_dir(config, run_dir, state, record)

    lm = load_base(config)
    packing = config.data.packing if config.data.packing is not None else lm.kind == "causal"
    if packing and lm.kind == "masked":
        raise QueerbiasError("config key 'data.packing' applies to causal LMs only")
    max_length = min(config.data.max_length, context_length(lm.model) or config.data.max_length)
    validation_source = resolve_validation(config.data)
    validation = [] if validation_source is None else tokenize(
        read_texts(validation_source, config.data, "validation", config.data.max_validation_docs),
        lm.tokenizer, lm.kind, max_length)
    if validation_source is None and config.eval.perplexity:
        log.warning("no validation split found; perplexity is not tracked (set data.validation)")
    general = general and tokenize(general, lm.tokenizer, lm.kind, max_length)

    names = config.benchmark_dirs()

    def run_eval(model, folder: Path, step: int, context: dict) -> dict:
        return evaluate(model, lm, str(folder), config.eval.benchmarks, names, folder, validation,
                        config, {**context, "run": str(run_dir), **record}, general=general, data=data)

    base = {**score_base(config, lm, data, run_dir / "base", state,
                         lambda: run_eval(lm.model, run_dir / "base", 0, {"step": 0, "epoch": 0.0})),
            "train_loss": None}
    if state.is_main_process and 0 not in {r["step"] for r in checkpoints.read_metrics(run_dir)}:
        checkpoints.append_metrics(run_dir, base)

    progress = Progress()

    def log_metrics(logs: dict) -> None:
        # Not trainer.log(): that would clear the pending training-loss log of this step.
        trainer.state.log_history.append({**logs, "step": trainer.state.global_step})
        trainer.callback_handler.on_log(trainer.args, trainer.state, TrainerControl(), logs)

    evaluation = CheckpointEvaluation(run_dir, run_eval, base, log=log_metrics, say=progress.write)
    trainer = _make_trainer(config, lm, run_dir, texts, training_pairs, packing, max_length,
                            [NonFiniteGuard(), progress, evaluation], state)
    trainer.remove_callback(ProgressCallback)
    trainer.remove_callback(PrinterCallback)
    try:
        result = trainer.train(resume_from_checkpoint=str(resume) if resume else None)
    finally:
        progress.close()

    final_dir = run_dir / "final"
    trainer.save_model(str(final_dir))
    if state.is_main_process:  # a pickle: the Hub flags it, and config.yaml records the arguments
        (final_dir / "training_args.bin").unlink(missing_ok=True)
    merged_dir = None
    if config.merge:
        merged_dir = run_dir / "merged"
        if state.is_main_process:
            merged = trainer.model.merge_and_unload()
            merged.save_pretrained(merged_dir, safe_serialization=True)
            lm.tokenizer.save_pretrained(merged_dir)
    state.wait_for_everyone()
    compared = compare_checkpoints(config, run_dir) if state.is_main_process else {}
    compare_dirs = [run_dir / "compare" / name for name in compared]
    if state.is_main_process:
        write_card(run_dir)  # RUN/final/README.md, from the run's files (train/card/)
    state.wait_for_everyone()
    metrics = checkpoints.read_metrics(run_dir)
    if state.is_main_process and metrics:
        print(summary_line(f"final (step {metrics[-1]['step']})", base, metrics[-1]))
        for name, document in compared.items():
            print(compare_line(document, name))
        for line in specificity_lines(compared):
            print(line)
        if compared:
            print(f"reports: {run_dir / 'compare'}/<benchmark>/ (delta.md, levels.png, forest.png); "
                  f"model card: {final_dir / 'README.md'}")
    return {"run_dir": run_dir, "final": final_dir, "merged": merged_dir, "compare": compare_dirs,
            "train_loss": result.training_loss, "metrics": metrics}


def _make_trainer(config: TrainConfig, lm, run_dir: Path, texts, training_pairs, packing: bool,
                  max_length: int, callbacks: list, state) -> Trainer:
    """The trainer for the configured objective, with our callbacks."""
    arguments = _training_kwargs(config, run_dir, packing)
    if config.objective == "dpo":
        from queerbias.train.objectives.dpo import dpo_trainer

        return dpo_trainer(lm, config, training_pairs, arguments, callbacks)
    # The trainer skips its division by the accumulation steps for models it believes
    # normalise by num_items_in_batch; BertForMaskedLM does not (see modeling).
    honours = honours_num_items_in_batch(lm.model, lm.kind)
    model = attach_adapter(lm.model, config, lm.kind)
    common = dict(
        model=model, args=TrainingArguments(**arguments),
        train_dataset=build_dataset(tokenize(texts, lm.tokenizer, lm.kind, max_length), lm.kind,
                                    packing, max_length),
        data_collator=make_collator(lm.tokenizer, lm.kind, packing, config.mlm_probability),
        processing_class=lm.tokenizer, callbacks=callbacks)
    if config.objective == "equalise":
        from queerbias.train.objectives.equalise import EqualiseTrainer, training_scorer
        from queerbias.train.objectives.pairs import PairBatches

        trainer = EqualiseTrainer(
            **common, scorer=training_scorer(model, lm.tokenizer, lm.kind),
            batches=PairBatches(training_pairs.pairs, config.pairs.batch_size, config.pairs.balance,
                                config.seed, config.pairs.groups_per_batch, config.grad_accum,
                                state.num_processes),
            settings=config.equalise, process_index=state.process_index)
    else:
        trainer = Trainer(**common)
    trainer.model_accepts_loss_kwargs = honours
    return trainer


def resolve_benchmarks(config: TrainConfig) -> tuple[TrainConfig, list[str]]:
    """The benchmarks this run evaluates: mitigation objectives default to the held-out split,
    and optional benchmarks whose data is not on this machine are left out (named)."""
    from queerbias.pairs.registry import available_offline
    from queerbias.suites.registry import get_suite

    resolved = copy.deepcopy(config)
    kept, skipped = [], []
    for bench, name in zip(resolved.eval.benchmarks, config.benchmark_dirs(), strict=True):
        pairs = get_suite(bench.suite).name == "pairs"
        if pairs and bench.data is None and config.objective != "lm":
            bench.data = HELD_OUT_DEFAULT
        if bench.optional and pairs and not available_offline(bench.data or get_suite("pairs").data_default):
            log.warning("benchmark %s (%s) is not available offline; skipped", name, bench.data)
            skipped.append(name)
            continue
        bench.name = name
        kept.append(bench)
    resolved.eval.benchmarks = kept
    return resolved, skipped


def _require_causal(config: TrainConfig) -> None:
    """dpo scores continuations, so it needs a causal LM; told before any weights load."""
    from queerbias.models.loading import inspect_model

    if inspect_model(config.model, kind=config.kind, trust_remote_code=config.trust_remote_code).kind != "causal":
        raise QueerbiasError(f"config key 'objective': dpo needs a causal LM, and {config.model} "
                             "is a masked LM (use equalise or cda for masked LMs)")


def _prepare_run_dir(config: TrainConfig, run_dir: Path, state, record: dict) -> Path | None:
    """Refuse a folder holding another config; drop half-written checkpoints; find the resume point.

    config.yaml holds the resolved config and, under `record`, what the run derived from
    it (objective, held-out check, corpus counts); only the config part must match.
    """
    saved = run_dir / CONFIG_NAME
    if saved.is_file():
        previous = load_yaml_mapping(saved, what="saved run config")
        previous.pop("record", None)
        if previous != config.to_dict():
            changed = sorted(k for k in set(previous) | set(config.to_dict())
                             if previous.get(k) != config.to_dict().get(k))
            raise QueerbiasError(f"{run_dir} holds a run with another config (differs in "
                                 f"{', '.join(changed)}); choose another output_dir or delete it")
    if state.is_main_process:
        run_dir.mkdir(parents=True, exist_ok=True)
        for folder in checkpoints.clear_incomplete(run_dir):
            log.info("removed incomplete checkpoint %s", folder)
        resume = checkpoints.last_complete(run_dir)
        checkpoints.trim_metrics(run_dir, _step(resume))
        save_config(config, saved, record)
    state.wait_for_everyone()
    resume = checkpoints.last_complete(run_dir)
    if resume is not None and state.is_main_process:
        log.info("resuming from %s", resume)
    return resume


def _checksum(texts: list[str]) -> str:
    return "sha256:" + hashlib.sha256("\n".join(texts).encode("utf-8")).hexdigest()


def _step(checkpoint: Path | None) -> int:
    return int(checkpoint.name.rsplit("-", 1)[1]) if checkpoint else 0


def _training_kwargs(config: TrainConfig, run_dir: Path, packing: bool) -> dict:
    """Keyword arguments of `TrainingArguments` (and of TRL's configs built on it)."""
    precision = resolve_precision(config.precision)
    return dict(
        output_dir=str(run_dir),
        num_train_epochs=config.epochs,
        max_steps=config.max_steps,
        per_device_train_batch_size=config.batch_size,
        gradient_accumulation_steps=config.grad_accum,
        learning_rate=config.learning_rate,
        lr_scheduler_type=config.lr_scheduler,
        warmup_steps=config.warmup_ratio,
        weight_decay=config.weight_decay,
        max_grad_norm=config.max_grad_norm,
        bf16=precision == "bf16",
        fp16=precision == "fp16",
        logging_steps=config.logging_steps,
        logging_nan_inf_filter=False,  # a NaN loss must show (train/guards.py), not be averaged away
        save_strategy="steps",
        save_steps=config.eval_every,
        eval_strategy="no",
        seed=config.seed,
        data_seed=config.seed,
        report_to=config.report_to,
        disable_tqdm=True,
        remove_unused_columns=False,
        dataloader_num_workers=0,
        dataloader_pin_memory=torch.cuda.is_available(),
        include_num_input_tokens_seen="all" if packing else "non_padding",
        use_cpu=not torch.cuda.is_available(),
        ddp_find_unused_parameters=False,
    )


def compare_line(document: dict, name: str) -> str:
    """The last checkpoint's change against base in one line, with interval and p: the
    distance to indifference where the suite reports one, else its overall measures."""
    from queerbias.report.delta_tables import change_text
    from queerbias.report.tables import fmt

    last = document["comparisons"][-1]
    if last.get("distance"):
        entry, figures, what = last["distance"], [("bias", "bias", 1), ("soft", "soft", 2)], "distance to indifference "
    else:
        entry, what = last["overall"], ""
        figures = [(m["name"], m["label"], m.get("digits", 1)) for m in document["measures"]
                   if f"delta_{m['name']}" in last["overall"]]
    changes = [f"{label} {fmt(entry.get(f'{key}_before'), digits)} -> {fmt(entry.get(f'{key}_after'), digits)} "
               f"(change {change_text(entry, key, digits)})" for key, label, digits in figures]
    return (f"{name}, {last['before']['label']} -> {last['after']['label']}: {what}" + "; ".join(changes)
            + closing_clauses(last))


def compare_checkpoints(config: TrainConfig, run_dir: Path) -> dict[str, dict]:
    """`RUN/compare/<benchmark>/` for every benchmark: base against every complete checkpoint;
    returns the delta documents written, by benchmark."""
    from queerbias.report.compare import CompareOptions, compare_runs, write_outputs
    from queerbias.report.runs import load_run

    options = CompareOptions(n_resamples=config.compare.resamples, seed=config.seed)
    done = [(step, folder) for step, folder in checkpoints.checkpoint_dirs(run_dir)
            if checkpoints.is_complete(folder)]
    documents = {}
    for name in config.benchmark_dirs():
        afters = [load_run(folder / name, f"step-{step}") for step, folder in done]
        if not afters:
            continue
        document = compare_runs(load_run(run_dir / "base" / name, "base"), afters, options,
                                best_criterion=config.compare.best, ppl_margin_pct=config.compare.ppl_margin)
        write_outputs(document, run_dir / "compare" / name)
        documents[name] = document
    return documents
