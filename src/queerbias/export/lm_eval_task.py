"""The lm-evaluation-harness task behind every `queerbias export lm-eval` folder (needs lm-eval).

One document is one pair. It asks for one `loglikelihood` per scored run of tokens of each
sentence (built and checked at export, `lm_eval_requests`); `process_results` turns the
returned sums into the two sentence scores and the pair's outcome with queerbias's own
rule (`pair_outcome`: 3-decimal rounding, ties neutral, soft score), and every reported
figure is a field of queerbias's `summarise` over those outcomes. So lm-eval reports the
numbers `queerbias score` writes, without a second implementation of either step.

Metrics: `bias_score` and `soft_score` over all pairs, and `bias_score/<group>` and
`soft_score/<group>` per identity group. Every document returns a value for every metric
(None for the groups it is not in), so lm-eval counts all metrics over the same documents.
"""

from __future__ import annotations

import functools
import json
import logging
from pathlib import Path

import datasets
from lm_eval.api.instance import Instance
from lm_eval.api.task import ConfigurableTask
from transformers import AutoTokenizer

from queerbias.export.lm_eval_requests import sentence_score
from queerbias.export.tokenizer_identity import tokenizer_fingerprint
from queerbias.pairs.schema import Pair
from queerbias.suites.pairs.aggregate import summarise
from queerbias.suites.pairs.scoring import pair_outcome
from queerbias.text.taxonomy import table_order

log = logging.getLogger(__name__)

FIGURES = ("bias_score", "soft_score")
PAIR_FIELDS = ("pair_id", "group", "counterfactual_group", "category", "direction", "sent_more", "sent_less")


class PairsTask(ConfigurableTask):
    """A pair benchmark exported for one tokenizer; `data_file` is set by the folder's utils.py."""

    data_file: Path

    def __init__(self, config: dict | None = None):
        config = {k: v for k, v in (config or {}).items() if k != "class"}
        super().__init__(config=config)
        self.export = self.config.metadata["queerbias"]
        self.groups = table_order(dict.fromkeys(group for doc in self.test_docs() for group in _groups(doc)))
        check_tokenizer(self.export, self.config.metadata)

    def download(self, dataset_kwargs=None, **kwargs) -> None:
        with open(self.data_file, encoding="utf-8") as lines:
            self.dataset = {"test": datasets.Dataset.from_list([json.loads(line) for line in lines])}

    def doc_to_text(self, doc) -> str:
        return ""  # every request carries its own context

    def doc_to_target(self, doc) -> str:
        return ""

    def construct_requests(self, doc: dict, ctx, **kwargs) -> list[Instance]:
        kwargs.pop("apply_chat_template", None)
        kwargs.pop("chat_template", None)
        arguments = doc["more"]["requests"] + doc["less"]["requests"] + doc["probe"]
        return [Instance(request_type="loglikelihood", doc=doc, arguments=tuple(a), idx=i, **kwargs)
                for i, a in enumerate(arguments)]

    def process_results(self, doc: dict, results) -> dict:
        loglikelihoods = [ll for ll, _ in results]
        split, end = len(doc["more"]["requests"]), len(doc["more"]["requests"]) + len(doc["less"]["requests"])
        scoring = self.export["scoring"]
        raw_more = sentence_score(loglikelihoods[:split], doc["more"]["n_tokens"], scoring["reduction"])
        raw_less = sentence_score(loglikelihoods[split:end], doc["less"]["n_tokens"], scoring["reduction"])
        outcome = pair_outcome(Pair(**{f: doc[f] for f in PAIR_FIELDS}), raw_more, raw_less,
                               scoring["decimals"])
        record = {"pair_id": doc["pair_id"], "group": doc["group"], "raw_more": raw_more,
                  "raw_less": raw_less, "score_more": outcome.score_more,
                  "score_less": outcome.score_less, "biased": outcome.biased,
                  "neutral": outcome.neutral, "soft": outcome.soft}
        metrics = {figure: record for figure in FIGURES}
        for group in self.groups:
            for figure in FIGURES:
                metrics[f"{figure}/{group}"] = record if group in _groups(doc) else None
        return metrics

    def aggregation(self) -> dict:
        table = {figure: functools.partial(aggregate, figure=figure) for figure in FIGURES}
        for group in self.groups:
            for figure in FIGURES:
                table[f"{figure}/{group}"] = functools.partial(aggregate, figure=figure)
        return table

    def higher_is_better(self) -> dict:
        # 50 is no preference; above it leans stereotypical, so lower is better down to 50
        return dict.fromkeys(self.aggregation(), False)


def _groups(doc: dict) -> list[str]:
    """Every group of an exported pair: it counts in each, as in queerbias's per-group summary (folders
    exported before pairs had several groups name one)."""
    return [doc["group"], *(doc.get("other_groups") or [])]


def aggregate(records: list, figure: str) -> float | None:
    """One figure of queerbias's per-group summary over the pairs' records (None = not in the group)."""
    chosen = [r for r in records if r is not None]
    summary = summarise([r["biased"] for r in chosen], [r["neutral"] for r in chosen],
                        [r["soft"] for r in chosen])
    return summary[figure]


def check_tokenizer(export: dict, metadata: dict) -> None:
    """Refuse a run whose tokenizer differs from the one the requests were built for.

    lm-eval hands a task the model arguments only as metadata (the CLI and `simple_evaluate`
    without a task manager of its own do); without them the check cannot run.
    """
    name = metadata.get("tokenizer") or metadata.get("pretrained")
    if not isinstance(name, str):
        log.warning("queerbias: the model's tokenizer is not known to the task, so it cannot be "
                    "checked; the results equal `queerbias score` only for a model with the "
                    "tokenizer %s", export["tokenizer"]["name"])
        return
    expected = export["add_bos_token"]
    if expected is not None and str(metadata.get("add_bos_token")).lower() != str(expected).lower():
        raise ValueError(f"queerbias: this task folder needs the model argument "
                         f"add_bos_token={expected} (it was exported with bos=none)")
    if str(metadata.get("dtype", "auto")) not in ("float32", "torch.float32"):
        log.warning("queerbias: `queerbias score` computes in float32; pass the model argument "
                    "dtype=float32 for equal numbers")
    try:
        tokenizer = AutoTokenizer.from_pretrained(name, trust_remote_code=False)
    except (OSError, ValueError) as err:
        log.warning("queerbias: cannot load the tokenizer of %s to check it (%s)", name, err)
        return
    if tokenizer_fingerprint(tokenizer) != export["tokenizer"]["fingerprint"]:
        raise ValueError(f"queerbias: this task folder was exported for the tokenizer of "
                         f"{export['tokenizer']['name']}, but {name} has another one; export "
                         "again with `queerbias export lm-eval --model` naming this model")
