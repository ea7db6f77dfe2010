"""Classifier view (the paper's own measure): predictions on originals and on each reformulation.

Per task and strategy: macro-F1 and its change against the original, the label flip
rate, and prediction certainty (mean max-softmax probability) and its change; unlike
the LM view, texts equal to the original are kept (they cannot flip), as in the paper.

Inputs are composed as upstream composes them (`utils/composition.py`,
`run_fine_tuning_task.py`): a task with a second field (X-Stance's topic) becomes one
string `text [SEP] topic` with the tokenizer's separator (`text topic` without one),
encoded as a single segment; the text of tasks marked `truncate_text` (GermEval) is
first cut to `max_length` (300) tokens; the whole input is then cut at the model's
input limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from tqdm.auto import tqdm

from queerbias.errors import QueerbiasError
from queerbias.models.context import context_length
from queerbias.models.embedded import is_embedded, prepare_embedded
from queerbias.models.fingerprint import weights_fingerprint
from queerbias.models.loading import DTYPES, load_checked_weights
from queerbias.report.paired_stats import cell_rng
from queerbias.suites.lou.data import ORIGINAL, Instance, TaskInfo
from queerbias.suites.lou.metrics import classifier_bootstrap, flip_rate, macro_f1, upstream_f1

DEFAULT_MAX_LENGTH = 300  # upstream's truncation of GermEval texts (tasks with truncate_text)
#: recorded in the run meta (and so in the run key): how inputs are composed
INPUT_COMPOSITION = "upstream: one string 'text [SEP] topic', one segment; truncate_text tasks cut to max_length"
DEFAULT_RESAMPLES = 2_000
PREDICT_BATCH = 16


@dataclass
class LoadedClassifier:
    """A sequence-classification model ready to predict, with what results record about it."""

    spec: str
    model: torch.nn.Module
    tokenizer: object
    fingerprint: str
    source: dict = field(default_factory=dict)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def num_labels(self) -> int:
        return int(self.model.config.num_labels)

    def describe(self) -> dict:
        return {"spec": self.spec, "kind": "sequence-classification", "fingerprint": self.fingerprint,
                "architecture": type(self.model).__name__, "num_labels": self.num_labels,
                "dtype": str(next(self.model.parameters()).dtype).removeprefix("torch."), **self.source}


def load_classifier(spec: str, *, num_labels: int | None = None, new_head: bool = False, dtype: str = "float32",
                    device: str | None = None, trust_remote_code: bool = False,
                    allow_pickle_weights: bool = False) -> LoadedClassifier:
    """Load a sequence classifier from safetensors (unless pickle is allowed).

    A checkpoint without trained classification weights would predict at random, so
    it is refused unless `new_head` (fine-tuning a base model) is asked for.
    """
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    if dtype not in DTYPES:
        raise QueerbiasError(f"dtype must be one of {sorted(DTYPES)}, got {dtype!r}")
    path = str(prepare_embedded(spec)) if is_embedded(spec) else spec
    extra = {"num_labels": num_labels} if num_labels is not None else {}
    try:
        model = load_checked_weights(AutoModelForSequenceClassification, path, DTYPES[dtype],
                                     {"trust_remote_code": trust_remote_code},
                                     allow_pickle_weights, new_head=new_head, **extra)
    except QueerbiasError as err:
        raise QueerbiasError(f"{err} For Lou: pass a fine-tuned classifier, or --train to "
                             "fine-tune this model.") from None
    tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code)
    if tokenizer.pad_token is None:  # causal LMs: pad with EOS, which the attention mask hides
        tokenizer.pad_token = tokenizer.eos_token
    model.config.pad_token_id = tokenizer.pad_token_id
    target = torch.device(device) if device else _default_device()
    model.to(target).eval()
    return LoadedClassifier(spec, model, tokenizer, weights_fingerprint(model), {"path": path})


def compose_input(tokenizer, text: str, text_pair: str | None, truncate_text: int | None = None) -> str:
    """The one input string of an instance, as upstream: the text (its first `truncate_text`
    tokens when longer), then `[SEP] topic` for tasks with a second field."""
    if truncate_text is not None:
        ids = tokenizer.encode(text, add_special_tokens=False)
        if len(ids) > truncate_text:
            text = tokenizer.decode(ids[:truncate_text])
    if text_pair is None:
        return text
    return f"{text} {tokenizer.sep_token} {text_pair}" if tokenizer.sep_token else f"{text} {text_pair}"


def encode_inputs(clf: LoadedClassifier, inputs: Sequence[tuple[str, str | None]],
                  truncate_text: int | None = None) -> list[dict]:
    """Token ids of composed inputs, cut at the model's input limit (upstream: `truncation=True`)."""
    limit = context_length(clf.model, clf.tokenizer)
    return [clf.tokenizer(compose_input(clf.tokenizer, text, pair, truncate_text),
                          truncation=limit is not None, max_length=limit) for text, pair in inputs]


def predict_proba(clf: LoadedClassifier, inputs: Sequence[tuple[str, str | None]],
                  truncate_text: int | None = None, batch_size: int = PREDICT_BATCH,
                  progress: bool = False) -> np.ndarray:
    """Softmax probabilities (n, num_labels) for (text, text_pair) inputs, batched by length."""
    encoded = encode_inputs(clf, inputs, truncate_text)
    order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]["input_ids"]))
    probs = np.empty((len(encoded), clf.num_labels))
    model_was_training = clf.model.training
    clf.model.eval()
    batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    for batch in tqdm(batches, desc="predicting", unit="batch", disable=not progress, dynamic_ncols=True):
        padded = clf.tokenizer.pad([encoded[i] for i in batch], return_tensors="pt")
        with torch.inference_mode():
            logits = clf.model(**{k: v.to(clf.device) for k, v in padded.items()}).logits
        probs[batch] = torch.softmax(logits.float(), dim=-1).cpu().numpy()
    clf.model.train(model_was_training)
    return probs


def check_labels(clf: LoadedClassifier, task: TaskInfo) -> None:
    """A classifier predicts the task's labels, or it was trained for another task."""
    if clf.num_labels != len(task.labels):
        raise QueerbiasError(f"{clf.spec} predicts {clf.num_labels} labels but {task.name} has "
                             f"{len(task.labels)} ({', '.join(task.labels)}); is it trained for this task?")


def classify_chunk(clf: LoadedClassifier, instances: Sequence[Instance], strategies: Sequence[str],
                   tasks: dict[str, TaskInfo], max_length: int = DEFAULT_MAX_LENGTH,
                   batch_size: int = PREDICT_BATCH) -> list[dict]:
    """One item row per instance and text version (original first), each distinct input predicted once;
    the texts of tasks marked `truncate_text` are cut to `max_length` tokens first, as upstream."""
    versions = (ORIGINAL, *strategies)
    probs = {}
    for name in dict.fromkeys(i.task for i in instances):
        inputs = list(dict.fromkeys((i.text(v), i.text_pair) for i in instances if i.task == name for v in versions))
        truncate = max_length if tasks[name].truncate_text else None
        probs[name] = dict(zip(inputs, predict_proba(clf, inputs, truncate, batch_size)))
    rows = []
    for instance in instances:
        predicted = probs[instance.task]
        base = int(np.argmax(predicted[(instance.original, instance.text_pair)]))
        for version in versions:
            p = predicted[(instance.text(version), instance.text_pair)]
            pred = int(np.argmax(p))
            rows.append({"task": instance.task, "index": instance.index, "label": instance.label,
                         "strategy": version, "identical": instance.text(version) == instance.original,
                         "pred": pred, "prob_max": float(p.max()), "flipped": pred != base})
    return rows


def summarise(rows: Sequence[dict], tasks: Sequence[str], strategies: Sequence[str], seed: int = 0,
              n_resamples: int = DEFAULT_RESAMPLES) -> dict:
    """Per task: the original's macro-F1 and certainty, and per strategy their changes and the flip rate.

    `f1_upstream`/`delta_f1_upstream`: the F1 upstream logs as "f1-macro" (binary tasks:
    the positive class's F1), beside true macro-F1, to set against the paper's tables.
    Certainty is the mean over instances of the max-softmax probability (`prob_max`).
    ΔF1 and the flip rate get paired bootstrap 95% intervals over instances, one seeded
    generator per task and strategy.
    """
    result = {}
    for task in tasks:
        versions = {v: sorted((r for r in rows if r["task"] == task and r["strategy"] == v), key=lambda r: r["index"])
                    for v in (ORIGINAL, *strategies)}
        base = versions[ORIGINAL]
        labels, base_preds = [r["label"] for r in base], [r["pred"] for r in base]
        base_f1, base_upstream = macro_f1(labels, base_preds), upstream_f1(labels, base_preds)
        base_certainty = float(np.mean([r["prob_max"] for r in base]))
        entries = {ORIGINAL: {"n": len(base), "macro_f1": base_f1, "f1_upstream": base_upstream,
                              "certainty": base_certainty}}
        for strategy in strategies:
            items = versions[strategy]
            if [r["index"] for r in items] != [r["index"] for r in base]:
                raise ValueError(f"{task}/{strategy}: the instances differ from the original's")
            preds = [r["pred"] for r in items]
            f1, f1_up = macro_f1(labels, preds), upstream_f1(labels, preds)
            mean_certainty = float(np.mean([r["prob_max"] for r in items]))
            entries[strategy] = {
                "n": len(items), "n_identical": sum(r["identical"] for r in items),
                "macro_f1": f1, "delta_f1": f1 - base_f1,
                "f1_upstream": f1_up, "delta_f1_upstream": f1_up - base_upstream,
                "flip_rate": flip_rate(base_preds, preds),
                "certainty": mean_certainty, "delta_certainty": mean_certainty - base_certainty,
                **classifier_bootstrap(labels, base_preds, preds, cell_rng(seed, task, strategy), n_resamples),
            }
        result[task] = entries
    return {"tasks": result}


def _default_device() -> torch.device:
    from accelerate import PartialState

    return PartialState().device
