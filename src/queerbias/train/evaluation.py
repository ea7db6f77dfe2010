"""What is measured at step 0 and at every checkpoint: every benchmark suite and held-out perplexity.

A benchmark is any registered suite (`queerbias suites`: pairs, gruff, lou, gifi, ...) with
its data, a sample and options; it is evaluated through the run store, so under
`accelerate launch` its items are sharded across the processes and the main process
writes the folder. The in-training model is scored as it is in memory (eval mode,
float32, adapter active), and put back into training mode afterwards. A benchmark's data
is loaded once per training run.

Every part shows a bar on the main process (`base: bias`, `step 24: perplexity`, ...), so the
minutes of a base or final evaluation are never silent.

Perplexity: causal LMs: exp of the mean next-token negative log-likelihood over every
validation token. Masked LMs have no such quantity; their figure is exp of the mean
loss at a fixed, seeded 15% of non-special positions replaced by the mask token, which
is the same set of positions at every checkpoint, so the figures are comparable.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import torch

from queerbias.distributed import process_state
from queerbias.families import get_family
from queerbias.models import LoadedModel
from queerbias.models.fingerprint import weights_fingerprint
from queerbias.progress import bar
from queerbias.suites.registry import get_suite
from queerbias.suites.store import run_to_dir
from queerbias.train.benchmarks import suite_settings
from queerbias.train.guards import finite_perplexity
from queerbias.train.modeling import scoring_view


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
               mlm_probability: float, batch_size: int = 8, seed: int = 0, progress: str | None = None) -> float:
    """Held-out perplexity over `chunks` (each process takes its share; sums are all-reduced), of what the family
    `kind` predicts (`Family.perplexity_targets`); `progress`: the label of a bar over the main process's
    documents."""
    family = get_family(kind)
    state = process_state()
    mine = chunks[state.process_index::state.num_processes]
    device = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    totals = torch.zeros(2, dtype=torch.float64, device=device)  # (nll sum, token count)
    generator = torch.Generator().manual_seed(seed)
    with torch.inference_mode(), bar(total=len(mine), unit="doc", desc=progress or "perplexity",
                                     disable=progress is None or not state.is_local_main_process) as shown:
        for start in range(0, len(mine), batch_size):
            shown.update(len(mine[start:start + batch_size]))
            batch = mine[start:start + batch_size]
            width = max(len(ids) for ids in batch)
            ids = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros_like(ids)
            for row, chunk in enumerate(batch):
                ids[row, :len(chunk)] = torch.tensor(chunk)
                mask[row, :len(chunk)] = 1
            inputs, targets = family.perplexity_targets(ids, mask, tokenizer, mlm_probability, generator)
            # one document at a time through the model, unpadded: its logits over a 262k vocabulary
            # are 100 MB where a batch's are 0.8 GB, twice over in the loss (the masking above is
            # drawn per batch, so a masked LM's positions stay where they were)
            for row, chunk in enumerate(batch):
                logits = model(input_ids=inputs[row:row + 1, :len(chunk)].to(device),
                               attention_mask=mask[row:row + 1, :len(chunk)].to(device)).logits[0]
                nll = torch.nn.functional.cross_entropy(logits.float(), targets[row, :len(chunk)].to(device),
                                                        ignore_index=-100, reduction="sum")
                totals += torch.stack([nll.double(), (targets[row] != -100).sum().double().to(device)])
    if state.num_processes > 1:
        torch.distributed.all_reduce(totals)
    return finite_perplexity(totals[0].item() / max(totals[1].item(), 1.0), model)


def evaluate(model: torch.nn.Module, lm_template: LoadedModel, spec: str, benchmarks: list,
             names: list[str], out_root: Path, validation: list[list[int]], config,
             extra_meta: dict, general: list[list[int]] | None = None, *, data: dict[str, tuple]) -> dict:
    """Perplexity and every benchmark for one state of the model -> one metrics record.

    `general`: the shipped neutral German text (`train.data.general_texts`), whose
    perplexity shows damage that in-domain perplexity (falling with any fine-tuning) hides;
    `data`: the benchmarks' loaded data (`train.benchmarks.load_data`).
    """
    record = {**extra_meta, "perplexity": None, "general_perplexity": None, "benchmarks": {}}
    step = extra_meta.get("step")
    stage = "base" if not step else f"step {step}"  # each bar says what it evaluates, on the main process
    with fp32_eval(model):
        view = scoring_view(model)
        if config.eval.perplexity and validation:
            record["perplexity"] = perplexity(view, validation, lm_template.kind, lm_template.tokenizer,
                                              config.mlm_probability, seed=config.seed,
                                              progress=f"{stage}: perplexity")
        if general:
            record["general_perplexity"] = perplexity(view, general, lm_template.kind,
                                                      lm_template.tokenizer, config.mlm_probability,
                                                      seed=config.seed, progress=f"{stage}: general perplexity")
        lm = LoadedModel(spec=spec, model=view, tokenizer=lm_template.tokenizer,
                         kind=lm_template.kind, fingerprint=weights_fingerprint(view),
                         source={**lm_template.source, "base_spec": lm_template.spec})
        meta = {**extra_meta, "perplexity": record["perplexity"],
                "general_perplexity": record["general_perplexity"]}
        for index, (bench, name) in enumerate(zip(benchmarks, names, strict=True)):
            suite = get_suite(bench.suite)
            settings = suite_settings(bench, f"eval.benchmarks[{index}]", config.eval.sequences_per_batch)
            summary = run_to_dir(suite, lm, data[name], out_root / name, settings,
                                 extra_meta=meta, progress=f"{stage}: {name}")
            # label, overall, groups and the suite's extras (pairs: the distance to indifference)
            record["benchmarks"][name] = {"suite": bench.suite, "data": bench.data or suite.data_default,
                                          **summary["headline"]}
    return record
