"""One training run, start to finish: the same code for 1 CPU process, GPUs and nodes.

Order: check the run folder before anything else (`checkpoints.training_folder`: no input
inside it, and empty or a training run's own; then locked while this run writes it);
resolve the benchmarks; stop if the run folder holds a finished run (a rerun never
rewrites one); load the training pairs, the benchmarks' data and the corpus, and refuse
evaluation items that overlap what the run trains on (before any model loads); refuse a run
folder of another config; load the base model and check it against the config (LoRA
targets and rank, memory); prepare the run folder (resume from the last complete
checkpoint, config.yaml written only now, so a refused run leaves none); score the base as
step 0 (`RUN/base/`; `eval.base_from` shares it between the runs of one model,
`train.shared_base`), train with checkpoint evaluation under the configured objective's
trainer (`train.objectives`), save the adapter or model (`RUN/final/`, merged into
`RUN/merged/` on request), compare base against every checkpoint (`RUN/compare/`), write
the model card and, last, the marker that the run finished.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from dataclasses import replace
from pathlib import Path

import torch
from transformers import PrinterCallback, ProgressCallback, TrainerControl

from queerbias.comparison.checkpoints import (
    LAST_REFUSED,
    REFUSED,
    TRAINING_CHECKPOINTS,
    guard_refusals,
    run_verdict,
)
from queerbias.comparison.compare import best_checkpoint, compare_runs, write_outputs
from queerbias.comparison.runs import load_run
from queerbias.distributed import process_state
from queerbias.errors import QueerbiasError
from queerbias.families import get_family
from queerbias.models.context import context_limit
from queerbias.options import without_new_defaults
from queerbias.outputs import OutputLock
from queerbias.pairs.resolve import declared_part
from queerbias.report.formatting import change_text
from queerbias.report.tables import fmt
from queerbias.scoring.config import ScoringConfig
from queerbias.scoring.encoding import lowercases
from queerbias.suites.paths import SUMMARY_FILE
from queerbias.suites.registry import companion
from queerbias.train import benchmarks, checkpoints
from queerbias.train.callbacks import CheckpointEvaluation, Progress, summary_line
from queerbias.train.card import write_card
from queerbias.train.card.body import closing_lines
from queerbias.train.config import TrainConfig, check_installed, default_values, migrate, save_config
from queerbias.train.corpus import prepare_corpus
from queerbias.train.data import general_texts, read_texts, resolve_validation
from queerbias.train.evaluation import evaluate
from queerbias.train.guards import NonFiniteGuard
from queerbias.train.modeling import (
    check_activation_checkpointing,
    check_adapter_modules,
    inspect_base,
    load_base,
    packs_documents,
    training_language,
)
from queerbias.train.objectives.protocol import TrainerSetup
from queerbias.train.objectives.registry import get_objective
from queerbias.train.overlap import check_overlap
from queerbias.train.pair_batches import load_training_pairs
from queerbias.train.precision import resolve_precision
from queerbias.train.shared_base import score_base
from queerbias.train.trainer import training_arguments
from queerbias.yamlio import load_yaml_mapping

log = logging.getLogger(__name__)

CONFIG_NAME = checkpoints.CONFIG


def run_training(config: TrainConfig, config_file: str | Path | None = None) -> dict:
    """Train (or resume) the configured run; returns paths and the final metrics. A run folder that
    holds a finished run of this config is left as it is: the result is read back from it.
    `config_file`: the YAML it was read from (an input the run folder must not hold)."""
    run_dir = checkpoints.training_folder(config, config_file)
    main = process_state().is_main_process
    with OutputLock(run_dir, "a training run") if main else contextlib.nullcontext():
        return _run_training(config)


def _run_training(config: TrainConfig) -> dict:
    state = process_state()
    check_installed(config)
    objective = get_objective(config.objective)
    config, skipped = benchmarks.resolve(config, objective.held_out)
    run_dir = Path(config.output_dir).expanduser()  # as `checkpoints.training_folder` checked it
    if checkpoints.is_finished(run_dir):
        return _finished(config, run_dir, state)
    if config.threads:
        torch.set_num_threads(config.threads)
    inspected = inspect_base(config)
    _require_kind(config, objective, inspected.kind)
    training_language(inspected.config, config)  # a model with language embeddings needs a language it knows
    raw_texts = (read_texts(config.data.train, config.data, "train", config.data.max_train_docs)
                 if objective.uses_corpus else None)
    training_pairs = load_training_pairs(config, raw_texts) if objective.uses_pairs else None
    data = benchmarks.load_data(config)
    texts, corpus = prepare_corpus(config, objective, raw_texts) if objective.uses_corpus else (None, None)
    overlap = check_overlap(config, data, training_pairs, texts, lowercases(inspected.tokenizer, ScoringConfig()))
    general = general_texts() if config.eval.general_perplexity else None
    record = {key: value for key, value in {
        "objective": config.objective, "precision": resolve_precision(config.precision), **overlap,
        "corpus": corpus,
        "targeted_groups": config.data.identities, "skipped_benchmarks": skipped,
        "general_text": general and {"documents": len(general), "checksum": _checksum(general)},
    }.items() if value}
    _require_same_config(config, run_dir)
    lm = load_base(config, inspected)
    check_adapter_modules(lm.model, config)  # refused before the folder holds this config: a fixed rerun may start
    check_activation_checkpointing(lm.model, config)
    resume = _prepare_run_dir(config, run_dir, state, record)
    packing = _packing(config, lm)
    max_length = _max_length(config, lm)
    validation_source = resolve_validation(config.data)
    family = get_family(lm.kind)
    validation = [] if validation_source is None else family.training_chunks(
        read_texts(validation_source, config.data, "validation", config.data.max_validation_docs),
        lm.tokenizer, max_length)
    if validation_source is None and config.eval.perplexity:
        log.warning("no validation split found; perplexity is not tracked (set data.validation)")
    general = general and family.training_chunks(general, lm.tokenizer, max_length)

    names = config.benchmark_dirs()

    def run_eval(model, folder: Path, step: int, context: dict) -> dict:
        return evaluate(model, lm, str(folder), config.eval.benchmarks, names, folder, validation,
                        config, {**context, "run": str(run_dir), **record}, general=general, data=data)

    base = {**score_base(config, lm, data, run_dir / "base", state,
                         lambda: run_eval(lm.model, run_dir / "base", 0, {"step": 0, "epoch": 0.0})),
            "train_loss": None}
    benchmarks.check_base_figures(config.eval.benchmarks, config.compare.best,
                                  [_summary(run_dir / "base" / name) for name in names])
    if state.is_main_process and 0 not in {r["step"] for r in checkpoints.read_metrics(run_dir)}:
        checkpoints.append_metrics(run_dir, base)

    progress = Progress()

    def log_metrics(logs: dict) -> None:
        # Not trainer.log(): that would clear the pending training-loss log of this step.
        trainer.state.log_history.append({**logs, "step": trainer.state.global_step})
        trainer.callback_handler.on_log(trainer.args, trainer.state, TrainerControl(), logs)

    evaluation = CheckpointEvaluation(run_dir, run_eval, base, log=log_metrics, say=progress.write)
    trainer = objective.make_trainer(TrainerSetup(
        config=config, settings=objective.settings(config), lm=lm, run_dir=run_dir, texts=texts, pairs=training_pairs, packing=packing,
        max_length=max_length, arguments=training_arguments(config, run_dir, packing),
        callbacks=[NonFiniteGuard(), progress, evaluation], process_index=state.process_index,
        num_processes=state.num_processes))
    trainer.remove_callback(ProgressCallback)
    trainer.remove_callback(PrinterCallback)
    try:
        if checkpoints.trained_to_the_end(resume):  # killed after its last checkpoint: its weights are the final ones
            trainer._load_from_checkpoint(str(resume))
            train_loss = None  # the loss over all steps is logged when training ends, which the kill cut short
        else:
            train_loss = trainer.train(resume_from_checkpoint=str(resume) if resume else None).training_loss
    finally:
        progress.close()

    final_dir = run_dir / "final"
    trainer.save_model(str(final_dir))
    if state.is_main_process:  # a pickle: the Hub flags it, and config.yaml records the arguments
        (final_dir / "training_args.bin").unlink(missing_ok=True)
    merged_dir = None
    if config.merge:
        merged_dir = run_dir / "merged"
        if state.is_main_process:
            merged = trainer.model.merge_and_unload()
            merged.save_pretrained(merged_dir, safe_serialization=True)
            lm.tokenizer.save_pretrained(merged_dir)
    state.wait_for_everyone()
    compared = compare_checkpoints(config, run_dir) if state.is_main_process else {}
    compare_dirs = [run_dir / "compare" / name for name in compared]
    if state.is_main_process:
        write_card(run_dir)  # RUN/final/README.md, from the run's files (train/card/)
        checkpoints.mark_finished(run_dir)
    state.wait_for_everyone()
    metrics = checkpoints.read_metrics(run_dir)
    if state.is_main_process and metrics:
        print(summary_line(f"final (step {metrics[-1]['step']})", base, metrics[-1]))
        for name, document in compared.items():
            print(compare_line(document, name))
        for line in closing_lines(compared):
            print(line)
        refusal = guard_line(config, compared)
        if refusal:
            print(refusal)
        if compared:
            print(f"reports: {run_dir / 'compare'}/<benchmark>/ (delta.md, levels.png, forest.png); "
                  f"model card: {final_dir / 'README.md'}")
    return {"run_dir": run_dir, "final": final_dir, "merged": merged_dir, "compare": compare_dirs,
            "train_loss": train_loss, "metrics": metrics}


def score_shared_base(config: TrainConfig) -> list[str]:
    """A study's base job: score the base model of `config` on its benchmarks straight into
    `eval.base_from`, as the first run of the model would (`train.shared_base`), without training;
    returns the benchmarks scored (those already there are left as they are). The model and data are
    read as a run reads them (its language, kind and precision), so every run of the model adopts
    the result; each folder's summary.json is written last, so a killed job leaves nothing that
    looks finished."""
    if not config.eval.base_from:
        raise QueerbiasError("config key 'eval.base_from' names no folder for the base evaluations")
    check_installed(config)
    config, _ = benchmarks.resolve(config, get_objective(config.objective).held_out)
    source = Path(config.eval.base_from)
    todo = [(bench, name) for bench, name in zip(config.eval.benchmarks, config.benchmark_dirs(), strict=True)
            if not (source / name / SUMMARY_FILE).is_file()]
    if not todo:
        return []
    if config.threads:
        torch.set_num_threads(config.threads)
    inspected = inspect_base(config)
    training_language(inspected.config, config)
    data = benchmarks.load_data(config)
    lm = load_base(config, inspected)
    evaluate(lm.model, lm, str(source), [bench for bench, _ in todo], [name for _, name in todo], source, [], config,
             {"scored_in": "the study's base job"}, data=data)
    return [name for _, name in todo]


def _finished(config: TrainConfig, run_dir: Path, state) -> dict:
    """A finished run of the same config: nothing is trained or written; what it holds is returned."""
    _require_same_config(config, run_dir)
    if state.is_main_process:
        print(f"{run_dir} holds a finished run of this config (final/, compare/, the model card); nothing to do. "
              "Choose another output_dir to train again.")
    merged = run_dir / "merged"
    return {"run_dir": run_dir, "final": run_dir / "final", "merged": merged if merged.is_dir() else None,
            "compare": [run_dir / "compare" / name for name in config.benchmark_dirs()
                        if (run_dir / "compare" / name).is_dir()],
            "train_loss": None, "metrics": checkpoints.read_metrics(run_dir), "finished": True}


def _require_kind(config: TrainConfig, objective, kind: str) -> None:
    """An objective that needs one kind of model (dpo: causal) is told before any weights load."""
    if objective.needs_kind is not None and kind != objective.needs_kind:
        raise QueerbiasError(f"config key 'objective': {objective.name} needs a {objective.needs_kind} LM "
                             f"({objective.needs_kind_reason}), and {config.model} is a {kind} LM")


def _require_same_config(config: TrainConfig, run_dir: Path) -> None:
    """Refuse a run folder holding another config (config.yaml's `record` is not compared)."""
    saved = run_dir / CONFIG_NAME
    if not saved.is_file():
        return
    previous = migrate(load_yaml_mapping(saved, what="saved run config"), warn=False)
    previous.pop("record", None)
    current = without_new_defaults(previous, config.to_dict(), default_values())
    if previous != current:
        changed = sorted(k for k in set(previous) | set(current) if previous.get(k) != current.get(k))
        raise QueerbiasError(f"{run_dir} holds a run with another config (differs in {', '.join(changed)}); "
                             "choose another output_dir or delete it")


def _max_length(config: TrainConfig, lm) -> int:
    """`data.max_length`, clipped to what the model takes (`models.context`: for XLM-RoBERTa the positions
    below its padding index do not count), with a line that says so: a longer sequence would index past
    the model's position table."""
    limit = context_limit(lm.model)
    if limit.tokens is None or config.data.max_length <= limit.tokens:
        return config.data.max_length
    log.warning("config key 'data.max_length': %s takes at most %d tokens (%s); training sequences are cut at %d, "
                "not %d", config.model, limit.tokens, limit.source, limit.tokens, config.data.max_length)
    return limit.tokens


def _packing(config: TrainConfig, lm) -> bool:
    """Padding-free packing: as configured, else on for causal LMs that keep packed documents apart
    (`modeling.packs_documents`); refused for masked LMs (a family that does not read left to right) and for
    causal ones that would not."""
    left_to_right = get_family(lm.kind).left_to_right
    if config.data.packing and not left_to_right:
        raise QueerbiasError("config key 'data.packing' applies to causal LMs only")
    if not left_to_right or config.data.packing is False:
        return False
    if packs_documents(lm.model):
        return True
    if config.data.packing:
        raise QueerbiasError(f"config key 'data.packing': {config.model} ({lm.model.config.model_type}) does not keep "
                             "the documents of a packed row apart (its attention ignores their position ids), so each "
                             "would read the one before; set data.packing: false")
    return False


def _prepare_run_dir(config: TrainConfig, run_dir: Path, state, record: dict) -> Path | None:
    """Drop half-written checkpoints, find the resume point and save the config (once the base model
    loaded and every check on it passed: a refused run leaves no config.yaml that would block its
    corrected rerun as "another config").

    config.yaml holds the resolved config and, under `record`, what the run derived from
    it (objective, held-out check, corpus counts); only the config part must match
    (`_require_same_config`, before the model loads).
    """
    if state.is_main_process:
        run_dir.mkdir(parents=True, exist_ok=True)
        for folder in checkpoints.clear_incomplete(run_dir):
            log.info("removed incomplete checkpoint %s", folder)
        resume = checkpoints.last_complete(run_dir)
        checkpoints.trim_metrics(run_dir, _step(resume))
        save_config(config, run_dir / CONFIG_NAME, record)
    state.wait_for_everyone()
    resume = checkpoints.last_complete(run_dir)
    if resume is not None and state.is_main_process:
        log.info("resuming from %s", resume)
    return resume


def _summary(folder: Path) -> dict | None:
    """A benchmark's summary.json in `folder` (None where it was not scored)."""
    return load_run(folder, "base").summary if (folder / SUMMARY_FILE).is_file() else None


def _checksum(texts: list[str]) -> str:
    return "sha256:" + hashlib.sha256("\n".join(texts).encode("utf-8")).hexdigest()


def _step(checkpoint: Path | None) -> int:
    return int(checkpoint.name.rsplit("-", 1)[1]) if checkpoint else 0


def compare_line(document: dict, name: str) -> str:
    """The last checkpoint's change against base in one line, with interval and p, of the figures its
    suite sums a change up with (its card companion's `closing_figures`: pairs: the distance to indifference)."""
    last = document["comparisons"][-1]
    card = companion(document["suite"], "card")
    title, entry, figures = card.closing_figures(last, document["measures"])
    changes = [f"{label} {fmt(entry.get(f'{key}_before'), digits)} -> {fmt(entry.get(f'{key}_after'), digits)} "
               f"(change {change_text(entry, key, digits)})" for key, label, digits in figures]
    return (f"{name}, {last['before']['label']} -> {last['after']['label']}: {title}" + "; ".join(changes)
            + card.closing_clauses(last))


def guard_line(config: TrainConfig, compared: dict[str, dict]) -> str | None:
    """The checkpoints a guard benchmark refused, with why, and, when it refused every one or the last
    (whose weights are final/), that those weights are not a mitigation to use: the figures above it
    stay what they are, but a run that pushed a group into the stereotype on frames it never saw must
    say so in its last line. The same verdict is kept in the run's files (`checkpoints.run_verdict`)."""
    guards = _guards(config)
    refused = guard_refusals(compared, guards)
    if not refused:
        return None
    named = "; ".join(f"step {step}: {why}" for step, why in sorted(refused.items()))
    status = run_verdict(compared, guards, refused)["status"]
    if status == REFUSED:
        return (f"GUARDS REFUSED EVERY CHECKPOINT ({named}): this adapter is not a mitigation to use; "
                "the closing lines above name the groups")
    last = ("; the last checkpoint's, whose weights are in final/, is not a mitigation to use"
            if status == LAST_REFUSED else "")
    return f"guards refused {named}; the best checkpoints above are chosen among the others{last}"


def _guards(config: TrainConfig) -> dict[str, float]:
    """Benchmark folder -> its guard allowance, for the benchmarks that guard the run."""
    return {name: bench.guard for bench, name in zip(config.eval.benchmarks, config.benchmark_dirs(), strict=True)
            if bench.guard is not None}


def compare_checkpoints(config: TrainConfig, run_dir: Path) -> dict[str, dict]:
    """`RUN/compare/<benchmark>/` for every benchmark: base against every complete checkpoint, the best
    by the benchmark's criterion (`best`, else `compare.best`, else its suite's first) among the
    checkpoints no guard benchmark (`guard`: the knowledge set) refuses. Every delta.json, and
    metrics.jsonl's last line, keeps the run's `verdict` and what its guards `refused` (step -> why), so
    that the verdict is read where the figures are; returns the delta documents written, by benchmark."""
    options = config.compare.seeded(config.seed)
    done = [(step, folder) for step, folder in checkpoints.checkpoint_dirs(run_dir)
            if checkpoints.is_complete(folder)]
    documents, criteria = {}, {}
    for i, (bench, name) in enumerate(zip(config.eval.benchmarks, config.benchmark_dirs(), strict=True)):
        afters = [load_run(folder / name, f"step-{step}") for step, folder in done]
        if afters:
            criteria[name] = benchmarks.criterion_of(bench, i, config.compare.best)[0]
            documents[name] = compare_runs(load_run(run_dir / "base" / name, "base"), afters,
                                           replace(options, best=criteria[name]), TRAINING_CHECKPOINTS)
    guards = _guards(config)
    refused = guard_refusals(documents, guards)
    tests = {name for bench, name in zip(config.eval.benchmarks, config.benchmark_dirs(), strict=True)
             if declared_part(bench.data) == "test"}
    for name, document in documents.items():
        if name in tests:  # a test split is judged on, never selected on: no checkpoint is best by it
            document["best"] = None
        elif refused and document.get("best"):
            document["best"] = best_checkpoint(document, criteria[name], config.compare.ppl_margin, refused)
    verdict = run_verdict(documents, guards, refused)
    for name, document in documents.items():
        document |= {"verdict": verdict, "refused": {str(step): why for step, why in sorted(refused.items())}}
        write_outputs(document, run_dir / "compare" / name)
    if documents:
        checkpoints.record_verdict(run_dir, verdict, documents[next(iter(documents))]["refused"])
    return documents
