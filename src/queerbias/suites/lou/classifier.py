"""Classifier view (the paper's own measure): predictions on originals and on each reformulation.

Per task and strategy: macro-F1 and its change against the original, the label flip
rate, and prediction certainty (mean max-softmax probability, on [0, 1]) and its change;
unlike the LM view, texts equal to the original are kept (they cannot flip), as in the paper.

Each row also carries what Sec. 6 ii (Table 3) and App. A.5 (Table 6) analyse: the text's
length in words (whitespace-separated, Table 5's unit) and German Flesch score (`readability`), its token count, and on reformulation rows
the attention the prediction token pays to the tokens the reformulation left unchanged, in
the original and in the reformulation (`prediction_attention`, `shared_attention`).

Inputs are composed as upstream composes them (`utils/composition.py`,
`run_fine_tuning_task.py`): a task with a second field (X-Stance's topic) becomes one
string `text [SEP] topic` with the tokenizer's separator (`text topic` without one),
encoded as a single segment; the text of tasks marked `truncate_text` (GermEval) is
first cut to `max_length` (300) tokens; the whole input is then cut at the model's
input limit.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from accelerate import PartialState
from tqdm.auto import tqdm
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from queerbias.errors import QueerbiasError
from queerbias.models.context import context_length
from queerbias.models.embedded import is_embedded, prepare_embedded
from queerbias.models.fingerprint import weights_fingerprint
from queerbias.models.loading import DTYPES, load_checked_weights
from queerbias.report.paired_stats import cell_rng
from queerbias.suites.lou.analysis import analyse
from queerbias.suites.lou.clusters import layer_clustering
from queerbias.suites.lou.data import ORIGINAL, Instance, TaskInfo
from queerbias.suites.lou.metrics import classifier_bootstrap, flip_rate, macro_f1, upstream_f1
from queerbias.suites.lou.readability import flesch_amstad, word_count

DEFAULT_MAX_LENGTH = 300  # upstream's truncation of GermEval texts (tasks with truncate_text)
#: recorded in the run meta (and so in the run key): how inputs are composed
INPUT_COMPOSITION = "upstream: one string 'text [SEP] topic', one segment; truncate_text tasks cut to max_length"
DEFAULT_RESAMPLES = 2_000
PREDICT_BATCH = 16
ATTENTION_BUDGET = 1 << 28  # bytes of attention weights (all layers, float32) one batch may return
ATTENTION_COLUMNS = ("attention_max_original", "attention_sd_original", "attention_max", "attention_sd")


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
                  truncate_text: int | None = None, offsets: bool = False) -> list[dict]:
    """Token ids of composed inputs, cut at the model's input limit (upstream: `truncation=True`);
    with `offsets`, each input also keeps its composed text (`text`) and the character span of every
    token (`offset_mapping`; fast tokenizers only)."""
    limit = context_length(clf.model, clf.tokenizer)
    composed = [compose_input(clf.tokenizer, text, pair, truncate_text) for text, pair in inputs]
    extra = {"return_offsets_mapping": True} if offsets else {}
    encoded = [clf.tokenizer(text, truncation=limit is not None, max_length=limit, **extra) for text in composed]
    if offsets:
        for text, entry in zip(composed, encoded, strict=True):
            entry["text"] = text
    return encoded


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


def prediction_attention(clf: LoadedClassifier, inputs: Sequence[tuple[str, str | None]],
                         truncate_text: int | None = None, batch_size: int = PREDICT_BATCH
                         ) -> list[tuple[list, np.ndarray] | None]:
    """Per input: its tokens but the structural ones (`structural_ids`), each as `token_key` gives it, and
    the attention the prediction token pays to each (last layer, mean over heads), as Sec. 6 ii
    characterises attention; None for all inputs when the model cannot return attention weights.

    The prediction token is the first one for classifiers that start with a [CLS]-like token
    (encoders), else the last (decoders classify from the last token). Attention weights need
    the eager implementation, so this is a second pass with the model switched to it and back;
    the predictions themselves keep the model's own implementation. The model returns the weights
    of every layer, so batches (of inputs of similar length) hold at most ATTENTION_BUDGET of them.
    """
    model, tokenizer = clf.model, clf.tokenizer
    encoded = encode_inputs(clf, inputs, truncate_text, offsets=tokenizer.is_fast)
    previous, was_training = model.config._attn_implementation, model.training
    special, cls = structural_ids(tokenizer), tokenizer.cls_token_id
    found: list[tuple[list, np.ndarray] | None] = [None] * len(encoded)
    per_square = 4 * getattr(model.config, "num_hidden_layers", 12) * getattr(model.config, "num_attention_heads", 12)
    order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]["input_ids"]))
    batches = []
    while order:
        longest = len(encoded[order[0]]["input_ids"])
        size = max(1, min(batch_size, ATTENTION_BUDGET // (per_square * longest ** 2)))
        batches.append(order[:size])
        order = order[size:]
    model.set_attn_implementation("eager")
    model.eval()
    try:
        for batch in batches:
            padded = tokenizer.pad([{key: encoded[i][key] for key in ("input_ids", "attention_mask", "token_type_ids")
                                     if key in encoded[i]} for i in batch], return_tensors="pt")
            with torch.inference_mode():
                attentions = model(**{k: v.to(clf.device) for k, v in padded.items()}, output_attentions=True).attentions
            if not attentions:
                return [None] * len(encoded)
            last = attentions[-1].float().mean(dim=1).cpu().numpy()  # (batch, query, key)
            for row, i in enumerate(batch):
                real = np.flatnonzero(padded["attention_mask"][row].numpy())
                ids = padded["input_ids"][row].numpy()[real]
                query = real[0] if cls is not None and ids[0] == cls else real[-1]
                keep = [k for k, token in enumerate(ids) if int(token) not in special]
                found[i] = ([token_key(tokenizer, encoded[i], k) for k in keep], last[row, query, real[keep]])
    finally:
        model.set_attn_implementation(previous)
        model.train(was_training)
    return found


def token_key(tokenizer, encoding: dict, k: int):
    """What the `k`-th token of an input stands for, to match tokens of an original and its reformulation:
    its id, but for the unknown token the text it covers (from the fast tokenizer's offsets). One [UNK]
    may stand for the reformulated word and another for the original's, and the paper excludes the
    tokens a reformulation touched; without offsets (slow tokenizers) an unknown token matches none."""
    token = int(encoding["input_ids"][k])
    if token != tokenizer.unk_token_id:
        return token
    if "offset_mapping" not in encoding:
        return object()
    start, end = encoding["offset_mapping"][k]
    return encoding["text"][start:end]


def layer_embeddings(clf: LoadedClassifier, inputs: Sequence[tuple[str, str | None]],
                     truncate_text: int | None = None, batch_size: int = PREDICT_BATCH) -> list[np.ndarray]:
    """Per input: the mean over its tokens (padding left out) of every layer's hidden states, the
    embedding layer first, (layers + 1, hidden), as Sec. 6 i averages them (Reimers & Gurevych 2019)."""
    encoded = encode_inputs(clf, inputs, truncate_text)
    found: list[np.ndarray] = [None] * len(encoded)
    order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]["input_ids"]))
    was_training = clf.model.training
    clf.model.eval()
    try:
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            padded = clf.tokenizer.pad([encoded[i] for i in batch], return_tensors="pt")
            with torch.inference_mode():
                states = clf.model(**{k: v.to(clf.device) for k, v in padded.items()},
                                   output_hidden_states=True).hidden_states
            mask = padded["attention_mask"].to(clf.device).unsqueeze(-1).float()
            layers = torch.stack([(s.float() * mask).sum(dim=1) / mask.sum(dim=1) for s in states], dim=1)
            for row, i in enumerate(batch):
                found[i] = layers[row].cpu().numpy()
    finally:
        clf.model.train(was_training)
    return found


def structural_ids(tokenizer) -> set[int]:
    """The ids of the tokens a tokenizer adds around a text (CLS, SEP, PAD, MASK, BOS, EOS), which
    attention rows leave out; the unknown token stands for input text (an out-of-vocabulary word, an
    emoji) and stays."""
    found = {getattr(tokenizer, f"{name}_token_id", None) for name in ("cls", "sep", "pad", "mask", "bos", "eos")}
    return {int(token) for token in found if token is not None} - {tokenizer.unk_token_id}


def shared_attention(original: tuple[list, np.ndarray], reformulated: tuple[list, np.ndarray]) -> dict | None:
    """Max and SD over tokens of the attention on the tokens both texts share (matched in order by
    `token_key`: an unknown token only where it covers the same text),
    in the original and in the reformulation: the paper excludes the tokens a reformulation
    changed so that both attention vectors have the same length. None without shared tokens."""
    (keys_o, att_o), (keys_r, att_r) = original, reformulated
    blocks = difflib.SequenceMatcher(None, keys_o, keys_r, autojunk=False).get_matching_blocks()
    pos_o = [b.a + k for b in blocks for k in range(b.size)]
    pos_r = [b.b + k for b in blocks for k in range(b.size)]
    if not pos_o:
        return None
    shared_o, shared_r = att_o[pos_o], att_r[pos_r]
    return {"attention_max_original": float(shared_o.max()), "attention_sd_original": float(shared_o.std()),
            "attention_max": float(shared_r.max()), "attention_sd": float(shared_r.std())}


def check_labels(clf: LoadedClassifier, task: TaskInfo) -> None:
    """A classifier predicts the task's labels, or it was trained for another task."""
    if clf.num_labels != len(task.labels):
        raise QueerbiasError(f"{clf.spec} predicts {clf.num_labels} labels but {task.name} has "
                             f"{len(task.labels)} ({', '.join(task.labels)}); is it trained for this task?")


def classify_chunk(clf: LoadedClassifier, instances: Sequence[Instance], strategies: Sequence[str],
                   tasks: dict[str, TaskInfo], max_length: int = DEFAULT_MAX_LENGTH,
                   batch_size: int = PREDICT_BATCH, layers: bool = False) -> list[dict]:
    """One item row per instance and text version (original first), each distinct input predicted once;
    the texts of tasks marked `truncate_text` are cut to `max_length` tokens first, as upstream. With
    `layers`, each reformulation row keeps r = s - s' per layer (`layer_embeddings`, rounded to 6
    decimals), which `clusters` clusters by strategy (Sec. 6 i)."""
    versions = (ORIGINAL, *strategies)
    probs, attention, embedded = {}, {}, {}
    for name in dict.fromkeys(i.task for i in instances):
        inputs = list(dict.fromkeys((i.text(v), i.text_pair) for i in instances if i.task == name for v in versions))
        truncate = max_length if tasks[name].truncate_text else None
        probs[name] = dict(zip(inputs, predict_proba(clf, inputs, truncate, batch_size)))
        attention[name] = dict(zip(inputs, prediction_attention(clf, inputs, truncate, batch_size)))
        if layers:
            embedded[name] = dict(zip(inputs, layer_embeddings(clf, inputs, truncate, batch_size)))
    texts = {text for i in instances for text in (i.original, *i.reformulations.values())}
    tokens = {text: len(clf.tokenizer(text, add_special_tokens=False)["input_ids"]) for text in texts}
    rows = []
    for instance in instances:
        predicted, attended = probs[instance.task], attention[instance.task]
        original = (instance.original, instance.text_pair)
        base = int(np.argmax(predicted[original]))
        for version in versions:
            text = instance.text(version)
            p = predicted[(text, instance.text_pair)]
            pred = int(np.argmax(p))
            shared, difference = None, None
            if version != ORIGINAL and attended[original] is not None:
                shared = shared_attention(attended[original], attended[(text, instance.text_pair)])
            if layers and version != ORIGINAL:
                vectors = embedded[instance.task]
                difference = np.round(vectors[original] - vectors[(text, instance.text_pair)], 6).tolist()
            rows.append({"task": instance.task, "index": instance.index, "label": instance.label,
                         "strategy": version, "identical": text == instance.original,
                         "pred": pred, "prob_max": float(p.max()), "flipped": pred != base,
                         "words": word_count(text), "flesch": flesch_amstad(text), "tokens": tokens[text],
                         **(shared or dict.fromkeys(ATTENTION_COLUMNS)),
                         **({"reformulation_layers": difference} if layers else {})})
    return rows


def summarise(rows: Sequence[dict], tasks: Sequence[str], strategies: Sequence[str], seed: int = 0,
              n_resamples: int = DEFAULT_RESAMPLES, length: str = "words") -> dict:
    """Per task: the original's macro-F1 and certainty, and per strategy their changes and the flip rate.

    `f1_upstream`/`delta_f1_upstream`: the F1 upstream logs as "f1-macro" (binary tasks:
    the positive class's F1), beside true macro-F1, to set against the paper's tables.
    Certainty is the mean over instances of the max-softmax probability (`prob_max`), on [0, 1]
    (the paper's Tables 3-4 use %). ΔF1 and the flip rate get paired bootstrap 95% intervals over
    instances, one seeded generator per task and strategy. `analysis`: Sec. 5 iv, Sec. 6 ii-iii and
    App. A.5 (module `analysis`), lengths counted in `length` (words or tokens).
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
    return {"tasks": result, "analysis": {**analyse(rows, result, tasks, strategies, length),
                                          "layer_clusters": layer_clustering(rows, seed)}}


def _default_device() -> torch.device:
    return PartialState().device
