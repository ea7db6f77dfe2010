"""What every objective's trainer is built from: the `TrainingArguments` of a run, and the
language-modelling `Trainer` (corpus, collator, adapter) that lm, cda and equalise share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch
from transformers import Trainer, TrainingArguments

from queerbias.families import get_family
from queerbias.train.data import TokenDataset
from queerbias.train.modeling import (
    attach_adapter,
    honours_num_items_in_batch,
    recompute_output_head,
    shifts_labels,
)
from queerbias.train.objectives.protocol import TrainerSetup
from queerbias.train.precision import resolve_precision


def training_arguments(config, run_dir: Path, packing: bool) -> dict:
    """Keyword arguments of `TrainingArguments` (and of TRL's configs built on it)."""
    precision = resolve_precision(config.precision)
    return dict(
        output_dir=str(run_dir),
        num_train_epochs=config.epochs,
        max_steps=config.max_steps,
        per_device_train_batch_size=config.examples_per_device,
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
        activation_checkpointing=config.activation_checkpointing,
        # non-reentrant: the inputs need no gradient of their own (LoRA's frozen embeddings) and the dropout masks
        # are replayed, so the gradients are those of the plain pass
        activation_checkpointing_kwargs={"use_reentrant": False} if config.activation_checkpointing else None,
    )


def language_model_trainer(setup: TrainerSetup, trainer_class: type[Trainer] = Trainer,
                           extra: Callable[[torch.nn.Module], dict] = lambda model: {}) -> Trainer:
    """`trainer_class` on the tokenized corpus (packed for causal LMs if configured) with the adapter
    attached; `extra(model)` adds the class's own keyword arguments for the adapted model."""
    config, lm = setup.config, setup.lm
    # The trainer skips its division by the accumulation steps for models it believes
    # normalise by num_items_in_batch; BertForMaskedLM does not (see modeling).
    honours = honours_num_items_in_batch(lm.model)
    family = get_family(lm.kind)
    shift = family.left_to_right and not shifts_labels(lm.model)  # XLM: next-token labels from the collator
    model = attach_adapter(lm.model, config, lm.kind)
    if config.activation_checkpointing:
        recompute_output_head(model)
    chunks = family.training_chunks(setup.texts, lm.tokenizer, setup.max_length)
    trainer = trainer_class(
        model=model, args=TrainingArguments(**setup.arguments),
        train_dataset=TokenDataset(*family.training_examples(chunks, setup.packing, setup.max_length)),
        data_collator=family.collator(lm.tokenizer, setup.packing, config.mlm_probability, shift),
        processing_class=lm.tokenizer, callbacks=setup.callbacks, **extra(model))
    trainer.model_accepts_loss_kwargs = honours
    return trainer
