"""`--train`: fine-tune a sequence classifier on a Lou task's original training split.

A thin recipe on `transformers.Trainer` (the loop our language-model training runs on):
the paper's recipe in small (upstream `run_fine_tuning_task.py`): AdamW, linear schedule
with 10% warm-up, gradient clipping at 1.0, weight decay except on biases and norms,
inputs composed and truncated as for predictions (`classifier.encode_inputs`), dev macro-F1
after every epoch and the best epoch kept.
Upstream searched batch size and learning rate per model and task and trained 5 epochs
for 10 seeds; we use one seed and fixed defaults (recorded in `lou_recipe.json` beside the
weights), so absolute F1 can differ from the paper's while flip rates remain comparable
in kind.
"""

from __future__ import annotations

import json
import random
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from transformers import DataCollatorWithPadding, Trainer, TrainerCallback, TrainingArguments

from queerbias.errors import QueerbiasError
from queerbias.fileio import atomic_write
from queerbias.pairs.registry import sha256_file
from queerbias.suites.lou.classifier import DEFAULT_MAX_LENGTH, encode_inputs, load_classifier
from queerbias.suites.lou.data import Example, load_split, lou_spec
from queerbias.suites.lou.metrics import macro_f1
from queerbias.suites.provenance import package_versions

RECIPE_FILE = "lou_recipe.json"


@dataclass(frozen=True)
class Recipe:
    """Fine-tuning settings; `train_limit`/`dev_limit` take seeded subsets (tests, quick runs)."""

    epochs: int = 5
    learning_rate: float = 2e-5
    batch_size: int = 16
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    max_length: int = DEFAULT_MAX_LENGTH
    seed: int = 0
    train_limit: int | None = None
    dev_limit: int | None = None

    def __post_init__(self):
        if self.epochs < 1 or self.batch_size < 1 or self.learning_rate <= 0:
            raise QueerbiasError("epochs and batch size must be at least 1, the learning rate positive")


def finetune(base: str, task: str, out_dir: str | Path, recipe: Recipe = Recipe(), *,
             data_dir: str | Path | None = None, progress: bool = True, **load_options) -> Path:
    """Train `base` on `task` and save the best-on-dev classifier to `out_dir` (reused if already there)."""
    out_dir = Path(out_dir)
    train, train_path = load_split(task, "train", data_dir)
    dev, dev_path = load_split(task, "dev", data_dir)
    provenance = {"base": base, "task": task, "recipe": asdict(recipe),
                  "data": {"train": sha256_file(train_path), "dev": sha256_file(dev_path)}}
    done = out_dir / RECIPE_FILE
    if done.is_file():
        previous = json.loads(done.read_text())
        if {k: previous.get(k) for k in provenance} == provenance:
            return out_dir
        raise QueerbiasError(f"{out_dir} holds a classifier trained differently; choose another --out")
    train, dev = _subset(train, recipe.train_limit, recipe.seed), _subset(dev, recipe.dev_limit, recipe.seed)

    torch.manual_seed(recipe.seed)
    labels = lou_spec().tasks[task].labels
    clf = load_classifier(base, num_labels=len(labels), new_head=True, **load_options)
    clf.model.config.id2label = dict(enumerate(labels))
    clf.model.config.label2id = {name: i for i, name in enumerate(labels)}

    class KeepBest(TrainerCallback):
        """Remembers the weights of the epoch with the best dev macro-F1."""

        best_f1, state = -1.0, None

        def on_evaluate(self, args, state, control, metrics=None, model=None, **kwargs):
            if metrics["eval_macro_f1"] > self.best_f1:
                self.best_f1 = metrics["eval_macro_f1"]
                self.state = {k: v.detach().clone() for k, v in model.state_dict().items()}

    keep = KeepBest()
    truncate = recipe.max_length if lou_spec().tasks[task].truncate_text else None  # as predictions
    with tempfile.TemporaryDirectory() as scratch:
        trainer = Trainer(
            model=clf.model, args=_arguments(recipe, scratch, progress),
            train_dataset=_encode(clf, train, truncate), eval_dataset=_encode(clf, dev, truncate),
            data_collator=DataCollatorWithPadding(clf.tokenizer),
            compute_metrics=lambda p: {"macro_f1": macro_f1(p.label_ids, np.argmax(p.predictions, axis=-1))},
            callbacks=[keep])
        trainer.train()
    clf.model.load_state_dict(keep.state)
    history = _history(trainer.state.log_history)
    out_dir.mkdir(parents=True, exist_ok=True)
    clf.model.save_pretrained(out_dir)
    clf.tokenizer.save_pretrained(out_dir)
    best = max(history, key=lambda h: h["dev_macro_f1"])
    record = {**provenance, "base_fingerprint": clf.fingerprint, "n_train": len(train), "n_dev": len(dev),
              "history": history, "best_epoch": best["epoch"], "versions": package_versions()}
    atomic_write(done, json.dumps(record, indent=2) + "\n")  # last: marks the folder complete
    return out_dir


def _arguments(recipe: Recipe, scratch: str, progress: bool):
    return TrainingArguments(
        output_dir=scratch, num_train_epochs=recipe.epochs, learning_rate=recipe.learning_rate,
        per_device_train_batch_size=recipe.batch_size, per_device_eval_batch_size=recipe.batch_size,
        warmup_steps=recipe.warmup_ratio, weight_decay=recipe.weight_decay, max_grad_norm=recipe.grad_clip,
        lr_scheduler_type="linear", eval_strategy="epoch", logging_strategy="epoch", save_strategy="no",
        seed=recipe.seed, data_seed=recipe.seed, report_to="none", disable_tqdm=not progress,
        use_cpu=not torch.cuda.is_available(), dataloader_num_workers=0)


def _encode(clf, examples: list[Example], truncate_text: int | None) -> list[dict]:
    encoded = encode_inputs(clf, [(e.text, e.text_pair) for e in examples], truncate_text)
    return [{**inputs, "labels": e.label} for inputs, e in zip(encoded, examples, strict=True)]


def _history(log: list[dict]) -> list[dict]:
    """Per epoch: mean training loss and dev macro-F1, from the trainer's log."""
    losses = {round(entry["epoch"]): entry["loss"] for entry in log if "loss" in entry}
    return [{"epoch": round(entry["epoch"]), "train_loss": losses.get(round(entry["epoch"])),
             "dev_macro_f1": entry["eval_macro_f1"]} for entry in log if "eval_macro_f1" in entry]


def _subset(examples: list[Example], limit: int | None, seed: int) -> list[Example]:
    if limit is None or limit >= len(examples):
        return examples
    return [examples[i] for i in sorted(random.Random(seed).sample(range(len(examples)), limit))]
