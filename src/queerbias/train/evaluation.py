"""What is measured at step 0 and at every checkpoint: bias benchmarks and held-out perplexity.

Benchmarks are entries of `SUITES` (suite name -> how to score a `LoadedModel` into an
output folder and which headline figures to log), so adding a suite is one registry entry.
`pairs` is the WinoQueer-style pair benchmark (overall = bias score), `gruff` the
pronoun-resolution suite (overall = accuracy), `lou` the gender-inclusive reformulation
suite (overall = mean share preferring the reformulation). The
in-training model is scored as it is in memory (eval mode, float32, adapter active),
and put back into training mode afterwards.

Perplexity: causal LMs: exp of the mean next-token negative log-likelihood over every
validation token. Masked LMs have no such quantity; their figure is exp of the mean
loss at a fixed, seeded 15% of non-special positions replaced by the mask token, which
is the same set of positions at every checkpoint, so the figures are comparable.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from queerbias.models import LoadedModel
from queerbias.models.fingerprint import weights_fingerprint
from queerbias.scoring.config import ScoringConfig


@dataclass(frozen=True)
class Suite:
    """How to score one suite into a folder, and its headline figures for metrics.jsonl."""

    run: Callable  # (lm, BenchmarkSettings, out_dir, batch_size, extra_meta) -> summary dict
    headline: Callable  # summary -> (overall figure, {group/setting: figure})
    default_data: str | None = None
    pairs: bool = False  # a pair-benchmark score dir, comparable with `queerbias compare`


def _run_pairs(lm, bench, out_dir, batch_size, extra_meta):
    from queerbias.scoring.runner import score_to_dir

    return score_to_dir(lm, bench.data or "queerbias-de", out_dir, ScoringConfig(),
                        batch_size=batch_size, sample=bench.sample, seed=bench.seed,
                        progress=False, extra_meta=extra_meta)


def _run_gruff(lm, bench, out_dir, batch_size, extra_meta):
    from queerbias.suites.gruff import run_gruff

    return run_gruff(lm, bench.data, out_dir, n=bench.sample, seed=bench.seed,
                     batch_size=batch_size, progress=False, extra_meta=extra_meta, **bench.options)


def _run_lou(lm, bench, out_dir, batch_size, extra_meta):
    from queerbias.suites.lou import run_lou

    return run_lou(lm, bench.data, out_dir, n=bench.sample, seed=bench.seed,
                   batch_size=batch_size, progress=False, extra_meta=extra_meta, **bench.options)


def _lou_headline(summary):
    pooled = {strategy: entry["preference"] for strategy, entry in summary["all"].items()}
    known = [v for v in pooled.values() if v is not None]
    return (sum(known) / len(known) if known else None), pooled


#: suite name -> Suite; `data` None means the suite's default data (gruff, lou: the cache copy)
SUITES: dict[str, Suite] = {
    "pairs": Suite(_run_pairs, lambda s: (s["overall"]["bias_score"],
                                          {g: v["bias_score"] for g, v in s["groups"].items()}),
                   default_data="queerbias-de", pairs=True),
    "gruff": Suite(_run_gruff, lambda s: (s["overall"]["accuracy"],
                                          {k: v.get("accuracy") for k, v in s["settings"].items()})),
    "lou": Suite(_run_lou, _lou_headline),
}


@contextlib.contextmanager
def fp32_eval(model: torch.nn.Module):
    """Eval mode with accelerate's mixed-precision forward wrapper lifted, then restored.

    Under bf16/fp16 training accelerate replaces `model.forward` by an autocast wrapper
    (keeping the original as `_original_forward`); scores must be float32.
    """
    patched = model.__dict__.get("forward")
    original = model.__dict__.get("_original_forward")
    was_training = model.training
    if patched is not None and original is not None:
        model.forward = original
    model.eval()
    try:
        with torch.autocast(device_type=next(model.parameters()).device.type, enabled=False):
            yield model
    finally:
        model.train(was_training)
        if patched is not None and original is not None:
            model.forward = patched


def perplexity(model: torch.nn.Module, chunks: list[list[int]], kind: str, tokenizer,
               mlm_probability: float, batch_size: int = 8, seed: int = 0) -> float:
    """Held-out perplexity over `chunks` (each process takes its share; sums are all-reduced)."""
    from queerbias.distributed import process_state

    state = process_state()
    mine = chunks[state.process_index::state.num_processes]
    device = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    totals = torch.zeros(2, dtype=torch.float64, device=device)  # (nll sum, token count)
    generator = torch.Generator().manual_seed(seed)
    with torch.inference_mode():
        for start in range(0, len(mine), batch_size):
            batch = mine[start:start + batch_size]
            width = max(len(ids) for ids in batch)
            ids = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros_like(ids)
            for row, chunk in enumerate(batch):
                ids[row, :len(chunk)] = torch.tensor(chunk)
                mask[row, :len(chunk)] = 1
            if kind == "masked":
                inputs, targets = _fixed_masking(ids, mask, tokenizer, mlm_probability, generator)
                logits = model(input_ids=inputs.to(device), attention_mask=mask.to(device)).logits
            else:
                logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits[:, :-1]
                targets = ids[:, 1:].masked_fill(mask[:, 1:] == 0, -100)
            nll = torch.nn.functional.cross_entropy(logits.float().flatten(0, 1), targets.to(device).flatten(),
                                                    ignore_index=-100, reduction="sum")
            totals += torch.stack([nll.double(), (targets != -100).sum().double().to(device)])
    if state.num_processes > 1:
        torch.distributed.all_reduce(totals)
    return math.exp(totals[0].item() / max(totals[1].item(), 1.0))


def _fixed_masking(ids, mask, tokenizer, probability: float, generator):
    special = torch.tensor([tokenizer.get_special_tokens_mask(row, already_has_special_tokens=True)
                            for row in ids.tolist()], dtype=torch.bool)
    chosen = (torch.rand(ids.shape, generator=generator) < probability) & ~special & (mask == 1)
    return ids.masked_fill(chosen, tokenizer.mask_token_id), ids.masked_fill(~chosen, -100)


def evaluate(model: torch.nn.Module, lm_template: LoadedModel, spec: str, benchmarks: list,
             names: list[str], out_root: Path, validation: list[list[int]], config,
             extra_meta: dict) -> dict:
    """Perplexity and every benchmark for one state of the model -> one metrics record."""
    record = {**extra_meta, "perplexity": None, "benchmarks": {}}
    with fp32_eval(model):
        from queerbias.train.modeling import scoring_view

        view = scoring_view(model)
        if config.eval.perplexity and validation:
            record["perplexity"] = perplexity(view, validation, lm_template.kind, lm_template.tokenizer,
                                              config.mlm_probability, seed=config.seed)
        lm = LoadedModel(spec=spec, model=view, tokenizer=lm_template.tokenizer,
                         kind=lm_template.kind, fingerprint=weights_fingerprint(view),
                         source={**lm_template.source, "base_spec": lm_template.spec})
        meta = {**extra_meta, "perplexity": record["perplexity"]}
        for bench, name in zip(benchmarks, names, strict=True):
            suite = SUITES[bench.suite]
            summary = suite.run(lm, bench, out_root / name, config.eval.batch_size, meta)
            overall, groups = suite.headline(summary)
            record["benchmarks"][name] = {"suite": bench.suite, "data": bench.data or suite.default_data,
                                          "overall": overall, "groups": groups}
            if "distance" in summary:
                record["benchmarks"][name]["distance"] = summary["distance"]
    return record
