"""One training run, start to finish: the same code for 1 CPU process, GPUs and nodes.

Order: check the run folder (resume from the last complete checkpoint), load the base
model, score it as step 0 (`RUN/base/`), attach the adapter, train with checkpoint
evaluation, save the adapter or model (`RUN/final/`, merged into `RUN/merged/` on
request) and compare base against every checkpoint (`RUN/compare/`).

The trainer is transformers' own `Trainer` with our callbacks rather than TRL's
`SFTTrainer`: one loop serves masked and causal LMs, packing is our padding-free
collator, and nothing beyond plain language modelling is needed (docs/training.md).
"""

from __future__ import annotations

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
from queerbias.train import checkpoints
from queerbias.train.callbacks import CheckpointEvaluation, Progress, summary_line
from queerbias.train.card import write_card
from queerbias.train.config import TrainConfig, save_config
from queerbias.train.data import (
    build_dataset,
    make_collator,
    read_texts,
    resolve_validation,
    tokenize,
)
from queerbias.train.evaluation import evaluate
from queerbias.train.guards import NonFiniteGuard
from queerbias.train.modeling import (
    attach_adapter,
    honours_num_items_in_batch,
    load_base,
)
from queerbias.yamlio import load_yaml_mapping

log = logging.getLogger(__name__)

CONFIG_NAME = "config.yaml"


def run_training(config: TrainConfig) -> dict:
    """Train (or resume) the configured run; returns paths and the final metrics."""
    state = process_state()
    run_dir = Path(config.output_dir)
    if config.threads:
        torch.set_num_threads(config.threads)
    resume = _prepare_run_dir(config, run_dir, state)

    lm = load_base(config)
    packing = config.data.packing if config.data.packing is not None else lm.kind == "causal"
    if packing and lm.kind == "masked":
        raise QueerbiasError("config key 'data.packing' applies to causal LMs only")
    max_length = min(config.data.max_length, context_length(lm.model) or config.data.max_length)
    train_set = build_dataset(
        tokenize(read_texts(config.data.train, config.data, "train", config.data.max_train_docs),
                 lm.tokenizer, lm.kind, max_length), lm.kind, packing, max_length)
    validation_source = resolve_validation(config.data)
    validation = [] if validation_source is None else tokenize(
        read_texts(validation_source, config.data, "validation", config.data.max_validation_docs),
        lm.tokenizer, lm.kind, max_length)
    if validation_source is None and config.eval.perplexity:
        log.warning("no validation split found; perplexity is not tracked (set data.validation)")

    names = config.benchmark_dirs()

    def run_eval(model, folder: Path, step: int, context: dict) -> dict:
        return evaluate(model, lm, str(folder), config.eval.benchmarks, names, folder, validation,
                        config, {**context, "run": str(run_dir)})

    base = {**run_eval(lm.model, run_dir / "base", 0, {"step": 0, "epoch": 0.0}), "train_loss": None}
    if state.is_main_process and 0 not in {r["step"] for r in checkpoints.read_metrics(run_dir)}:
        checkpoints.append_metrics(run_dir, base)

    honours = honours_num_items_in_batch(lm.model, lm.kind)
    model = attach_adapter(lm.model, config, lm.kind)
    progress = Progress()

    def log_metrics(logs: dict) -> None:
        # Not trainer.log(): that would clear the pending training-loss log of this step.
        trainer.state.log_history.append({**logs, "step": trainer.state.global_step})
        trainer.callback_handler.on_log(trainer.args, trainer.state, TrainerControl(), logs)

    evaluation = CheckpointEvaluation(run_dir, run_eval, base, log=log_metrics, say=progress.write)
    trainer = Trainer(
        model=model, args=_training_arguments(config, run_dir, packing), train_dataset=train_set,
        data_collator=make_collator(lm.tokenizer, lm.kind, packing, config.mlm_probability),
        processing_class=lm.tokenizer, callbacks=[NonFiniteGuard(), progress, evaluation])
    trainer.remove_callback(ProgressCallback)
    trainer.remove_callback(PrinterCallback)
    # The trainer skips its division by the accumulation steps for models it believes
    # normalise by num_items_in_batch; BertForMaskedLM does not (see modeling).
    trainer.model_accepts_loss_kwargs = honours
    try:
        result = trainer.train(resume_from_checkpoint=str(resume) if resume else None)
    finally:
        progress.close()

    final_dir = run_dir / "final"
    trainer.save_model(str(final_dir))
    merged_dir = None
    if config.merge:
        merged_dir = run_dir / "merged"
        if state.is_main_process:
            merged = trainer.model.merge_and_unload()
            merged.save_pretrained(merged_dir, safe_serialization=True)
            lm.tokenizer.save_pretrained(merged_dir)
    state.wait_for_everyone()
    compare_dirs = compare_checkpoints(config, run_dir) if state.is_main_process else []
    if state.is_main_process:
        write_card(run_dir)  # RUN/final/README.md, from the run's files (train/card/)
    state.wait_for_everyone()
    metrics = checkpoints.read_metrics(run_dir)
    if state.is_main_process and metrics:
        print(summary_line(f"final (step {metrics[-1]['step']})", base, metrics[-1]))
    return {"run_dir": run_dir, "final": final_dir, "merged": merged_dir, "compare": compare_dirs,
            "train_loss": result.training_loss, "metrics": metrics}


def _prepare_run_dir(config: TrainConfig, run_dir: Path, state) -> Path | None:
    """Refuse a folder holding another config; drop half-written checkpoints; find the resume point."""
    saved = run_dir / CONFIG_NAME
    if saved.is_file():
        previous = load_yaml_mapping(saved, what="saved run config")
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
        save_config(config, saved)
    state.wait_for_everyone()
    resume = checkpoints.last_complete(run_dir)
    if resume is not None and state.is_main_process:
        log.info("resuming from %s", resume)
    return resume


def _step(checkpoint: Path | None) -> int:
    return int(checkpoint.name.rsplit("-", 1)[1]) if checkpoint else 0


def _training_arguments(config: TrainConfig, run_dir: Path, packing: bool) -> TrainingArguments:
    return TrainingArguments(
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
        bf16=config.precision == "bf16",
        fp16=config.precision == "fp16",
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


def compare_checkpoints(config: TrainConfig, run_dir: Path) -> list[Path]:
    """`RUN/compare/<benchmark>/` for every benchmark: base against every complete checkpoint."""
    from queerbias.report.compare import CompareOptions, compare_runs, write_outputs
    from queerbias.report.runs import load_run

    options = CompareOptions(n_resamples=config.compare.resamples, seed=config.seed)
    done = [(step, folder) for step, folder in checkpoints.checkpoint_dirs(run_dir)
            if checkpoints.is_complete(folder)]
    outputs = []
    for name in config.benchmark_dirs():
        afters = [load_run(folder / name, f"step-{step}") for step, folder in done]
        if not afters:
            continue
        document = compare_runs(load_run(run_dir / "base" / name, "base"), afters, options,
                                best_criterion=config.compare.best, ppl_margin_pct=config.compare.ppl_margin)
        out = run_dir / "compare" / name
        write_outputs(document, out)
        outputs.append(out)
    return outputs
