"""`--train`: fine-tune a sequence classifier on a Lou task's original training split.

A small version of the paper's recipe (upstream `run_fine_tuning_task.py`): AdamW,
linear schedule with 10% warm-up, gradient clipping at 1.0, inputs composed and
truncated as for predictions (`classifier.encode_inputs`), and the epoch with the best dev macro-F1 kept. Upstream searched batch size
and learning rate per model and task and trained 5 epochs for 10 seeds; we use one
seed and fixed defaults (recorded in `lou_recipe.json` beside the weights), so
absolute F1 can differ from the paper's while flip rates remain comparable in kind.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from queerbias.errors import QueerbiasError
from queerbias.fileio import atomic_write
from queerbias.pairs.registry import sha256_file
from queerbias.scoring.results import package_versions
from queerbias.suites.lou.classifier import (
    DEFAULT_MAX_LENGTH,
    encode_inputs,
    examples_proba,
    load_classifier,
)
from queerbias.suites.lou.data import Example, load_split, lou_spec
from queerbias.suites.lou.metrics import macro_f1

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
    model = clf.model
    model.config.id2label = dict(enumerate(labels))
    model.config.label2id = {name: i for i, name in enumerate(labels)}
    truncate = recipe.max_length if lou_spec().tasks[task].truncate_text else None  # as predictions
    encoded = encode_inputs(clf, [(e.text, e.text_pair) for e in train], truncate)
    steps_per_epoch = -(-len(encoded) // recipe.batch_size)
    optimizer, scheduler = _optimiser(model, recipe, steps_per_epoch * recipe.epochs)
    generator = torch.Generator().manual_seed(recipe.seed)
    history, best_f1, best_state = [], -1.0, None
    for epoch in range(1, recipe.epochs + 1):
        model.train()
        order = torch.randperm(len(encoded), generator=generator).tolist()
        losses = []
        for start in tqdm(range(0, len(order), recipe.batch_size), desc=f"{task} epoch {epoch}",
                          disable=not progress, dynamic_ncols=True):
            batch = order[start:start + recipe.batch_size]
            inputs = clf.tokenizer.pad([encoded[i] for i in batch], return_tensors="pt")
            inputs = {k: v.to(clf.device) for k, v in inputs.items()}
            target = torch.tensor([train[i].label for i in batch], device=clf.device)
            loss = torch.nn.functional.cross_entropy(model(**inputs).logits.float(), target)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), recipe.grad_clip)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            losses.append(loss.item())
        dev_f1 = macro_f1([e.label for e in dev], examples_proba(clf, dev, truncate).argmax(axis=1))
        history.append({"epoch": epoch, "train_loss": float(np.mean(losses)), "dev_macro_f1": dev_f1})
        if dev_f1 > best_f1:
            best_f1 = dev_f1
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    clf.tokenizer.save_pretrained(out_dir)
    best = max(history, key=lambda h: h["dev_macro_f1"])
    record = {**provenance, "base_fingerprint": clf.fingerprint, "n_train": len(train), "n_dev": len(dev),
              "history": history, "best_epoch": best["epoch"], "versions": package_versions()}
    atomic_write(done, json.dumps(record, indent=2) + "\n")  # last: marks the folder complete
    return out_dir


def _subset(examples: list[Example], limit: int | None, seed: int) -> list[Example]:
    if limit is None or limit >= len(examples):
        return examples
    return [examples[i] for i in sorted(random.Random(seed).sample(range(len(examples)), limit))]


def _optimiser(model: torch.nn.Module, recipe: Recipe, total_steps: int):
    from transformers import get_linear_schedule_with_warmup

    decay = [p for n, p in model.named_parameters() if p.ndim > 1 and "norm" not in n.lower()]
    no_decay = [p for n, p in model.named_parameters() if not (p.ndim > 1 and "norm" not in n.lower())]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": recipe.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=recipe.learning_rate)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(recipe.warmup_ratio * total_steps), total_steps)
    return optimizer, scheduler
