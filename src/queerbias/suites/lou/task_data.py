"""App. A.4, Table 5: the Lou tasks' data, described as the paper describes it.

Table 5 gives per task the texts' length and Flesch score (mean ± SD), the number of samples,
the label counts and the KL divergence between the train and test label distributions. Its
figures are over the whole task data, not the 200 Lou test instances: GermEval-Engaging's
2,276 samples and 635 / 1,641 labels are exactly train (1,660) + dev (416) + the 200 test
originals of the public files, and its length of 30.6 ± 41.6 is 30.55 ± 41.61 whitespace words
over them. So here each task is described over the splits present without a download (the
data folder's `tasks/<task>/{train,dev}.jsonl`, or the verified cache or shared copies) and the
Lou file's originals (all of them, whatever the run samples) as the test split; `splits` says
which were read, with their sizes and checksums.

- length: whitespace words (`readability.word_count`), mean ± SD (ddof 1);
- flesch: Amstad's German Flesch Reading Ease (`readability.flesch_amstad`), mean ± SD over the
  texts with a word;
- labels: count per label name (the task's names in lou.yaml);
- kl: KL(P_train ‖ P_test) of the label distributions in nats (the paper names neither the
  direction nor the base); None without both splits or where a train label never occurs in test.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np

from queerbias.pairs.registry import sha256_file
from queerbias.suites.lou.data import SPLITS, LouTask, local_file, read_split
from queerbias.suites.lou.readability import flesch_amstad, word_count

TEST = "test"


def describe_task(task: LouTask, data_dir: str | Path | None) -> dict:
    """Table 5's column of one task over its train, dev (where present) and test texts."""
    texts = {}
    files = {}
    for split in SPLITS:
        path = local_file(f"tasks/{task.name}/{split}.jsonl", data_dir)
        if path is not None:
            texts[split] = [(example.text, example.label) for example in read_split(task.name, path)]
            files[split] = sha256_file(path)
    texts[TEST] = [(instance.original, instance.label) for instance in task.instances]
    files[TEST] = task.checksum
    pooled = [entry for split in texts.values() for entry in split]
    names = task.info.labels
    return {"splits": {split: {"n": len(entries), "sha256": files[split]} for split, entries in texts.items()},
            "n": len(pooled), "length": spread([word_count(text) for text, _ in pooled]),
            "flesch": spread([f for text, _ in pooled if (f := flesch_amstad(text)) is not None]),
            "labels": {names[label]: n for label, n in sorted(Counter(label for _, label in pooled).items())},
            "kl": label_divergence([label for _, label in texts["train"]], [label for _, label in texts[TEST]])
            if "train" in texts else None}


def spread(values: list[float]) -> dict:
    """Mean and sample SD (None for fewer than two values) and their number."""
    return {"n": len(values), "mean": float(np.mean(values)) if values else None,
            "sd": float(np.std(values, ddof=1)) if len(values) > 1 else None}


def label_divergence(train: list[int], test: list[int]) -> float | None:
    """KL(P_train ‖ P_test) in nats over the labels of either split; None where it is infinite
    (a train label absent from test) or a split is empty."""
    if not train or not test:
        return None
    p, q = Counter(train), Counter(test)
    if any(q[label] == 0 for label in p):
        return None
    return float(sum(n / len(train) * math.log((n / len(train)) / (q[label] / len(test))) for label, n in p.items()))
