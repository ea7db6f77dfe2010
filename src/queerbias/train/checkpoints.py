"""Checkpoint bookkeeping for resume: completion markers, the last complete checkpoint,
clearing what a killed run left half-written, the metrics log, the mark of a finished run,
and the rule that a run folder is empty or a training run's own.

A checkpoint counts only once its marker exists; the marker is written after the
trainer saved weights, optimizer, scheduler and RNG state and after its bias results
and metrics line were written. `transformers.trainer_utils.get_last_checkpoint` only
looks at folder names, so a run killed mid-save would resume from a broken folder.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from queerbias import killpoint
from queerbias.errors import DataError, QueerbiasError
from queerbias.fileio import atomic_write, iter_jsonl
from queerbias.outputs import LOCK_FILE, TRAINING, folder_owner, output_path

MARKER = "queerbias-complete"
#: written last by a training run (after final/, compare/ and the card): a rerun leaves it as it is
FINISHED = "queerbias-finished"
METRICS = "metrics.jsonl"
CONFIG = "config.yaml"
_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")
#: what a training run writes beside its config.yaml (runs/: the trainer's TensorBoard logs;
#: README.md: the model card TRL's trainers write into their output_dir)
RUN_ENTRIES = (METRICS, FINISHED, "base", "final", "merged", "compare", "runs", "README.md")
#: what a launcher keeps beside the run (`queerbias study`: the cell's config, log, launches and lock)
LAUNCHER_PREFIXES = ("study-cell", ".study-cell")


def training_folder(config, config_file: str | Path | None = None) -> Path:
    """The run folder, checked before any file is touched: it holds no input of the run (its
    config file, the model, the corpus, pair and benchmark files: every path the config names,
    with `..` and split specs resolved) and is empty or a training run's own
    (`check_run_folder`)."""
    inputs = {key: value for key, value in config.to_dict().items() if key != "output_dir"}
    inputs["eval"] = {key: value for key, value in inputs["eval"].items() if key != "base_from"}  # an output
    if config_file is not None and Path(config_file).name.startswith(LAUNCHER_PREFIXES):
        config_file = None  # a launcher's config beside the run (`queerbias study`), which no run writes
    run_dir = output_path(config.output_dir, [config_file, inputs], option="config key 'output_dir'",
                          kind=TRAINING)
    check_run_folder(run_dir)
    return run_dir


def owned_entry(name: str) -> bool:
    """Whether an entry of a run folder is one a training run or its launcher writes."""
    return (name in (CONFIG, LOCK_FILE, *RUN_ENTRIES) or bool(_CHECKPOINT.match(name))
            or name.startswith(LAUNCHER_PREFIXES))


def check_run_folder(run_dir: Path) -> None:
    """A run folder is empty, or a training run's own: every entry one a run (or its launcher)
    writes, and checkpoints, metrics and results only beside the config.yaml a run writes first.
    Anything else (a Hugging Face Trainer's checkpoint-100 without our config, a model, a file
    another tool wrote) is refused before a file is touched, naming one such entry; resuming
    would otherwise take it for a half-written checkpoint of ours and delete it."""
    if not run_dir.is_dir():
        return
    entries = sorted(run_dir.iterdir())
    configured = (run_dir / CONFIG).is_file()
    for entry in entries:
        if entry.name.startswith(LAUNCHER_PREFIXES) or entry.name in (LOCK_FILE, CONFIG):
            continue
        known = owned_entry(entry.name)
        if known and configured:
            continue
        owner = folder_owner(run_dir)
        what = f"; the folder is {owner[0]} ({owner[1].relative_to(run_dir)})" if owner and owner[0] != TRAINING \
            else ""
        why = "which no queerbias training run wrote" if not known else f"but no {CONFIG} of a training run"
        raise QueerbiasError(f"config key 'output_dir': {run_dir} holds {entry.name}, {why}{what}; a training run "
                             "writes into an empty folder or one of its own runs; choose another output_dir")


def checkpoint_dirs(run_dir: Path) -> list[tuple[int, Path]]:
    """(step, folder) of every checkpoint folder, complete or not, by step."""
    if not run_dir.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in run_dir.iterdir()
             if p.is_dir() and (m := _CHECKPOINT.match(p.name))]
    return sorted(found)


def is_complete(folder: Path) -> bool:
    return (folder / MARKER).is_file()


def mark_complete(folder: Path) -> None:
    atomic_write(folder / MARKER, "complete\n")
    killpoint.reached("checkpoint")


def mark_finished(run_dir: Path) -> None:
    atomic_write(run_dir / FINISHED, "finished\n")


def is_finished(run_dir: Path) -> bool:
    """Whether the run finished: its mark beside trained weights in final/ (deleting final/ makes the
    run resumable again). A model card proves nothing: `queerbias card` writes one into any run."""
    return holds_weights(run_dir / "final") and (run_dir / FINISHED).is_file()


def holds_weights(folder: Path) -> bool:
    """Whether a folder holds saved weights: an adapter or a model."""
    return (folder / "adapter_config.json").is_file() or (folder / "config.json").is_file()


def trained_to_the_end(checkpoint: Path | None) -> bool:
    """Whether a complete checkpoint is the training's last (its trainer_state.json: global_step reached
    max_steps): a run killed after it has nothing left to train. transformers' Trainer, resumed from
    such a checkpoint, would take one more optimizer step before it checks the step count, so a
    resumed run would end one step past an uninterrupted one."""
    path = None if checkpoint is None else checkpoint / "trainer_state.json"
    if path is None or not path.is_file():
        return False
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DataError(path, f"not a trainer state ({err}); delete {checkpoint} to resume from the checkpoint "
                              "before it") from None
    steps = [state.get(key) if isinstance(state, dict) else None for key in ("max_steps", "global_step")]
    return all(isinstance(n, int) for n in steps) and 0 < steps[0] <= steps[1]


def last_complete(run_dir: Path) -> Path | None:
    complete = [p for _, p in checkpoint_dirs(run_dir) if is_complete(p)]
    return complete[-1] if complete else None


def clear_incomplete(run_dir: Path) -> list[Path]:
    """Remove checkpoint folders without a marker (a kill during evaluation or saving)."""
    removed = [p for _, p in checkpoint_dirs(run_dir) if not is_complete(p)]
    for folder in removed:
        shutil.rmtree(folder)
    return removed


def append_metrics(run_dir: Path, record: dict) -> None:
    with open(run_dir / METRICS, "a", encoding="utf-8") as sink:
        sink.write(json.dumps(record, allow_nan=False) + "\n")


#: what every metrics line holds, as `train.evaluation.evaluate` writes it: the key and the JSON types of its value
METRICS_FIELDS = {"step": (int,), "epoch": (int, float), "perplexity": (int, float, type(None)),
                  "general_perplexity": (int, float, type(None)), "benchmarks": (dict,)}


def read_metrics(run_dir: Path) -> list[dict]:
    """The metrics lines of a run, read strictly: each a JSON object with the fields a run writes
    (`METRICS_FIELDS`), steps rising line by line (a file another tool wrote there, or a line
    appended to a run's, `{"step": 6}`, is refused naming the file and line, never read as a
    step the run reached)."""
    path = run_dir / METRICS
    if not path.is_file():
        return []
    records: list[dict] = []
    for row, record in iter_jsonl(path):
        for field, types in METRICS_FIELDS.items():
            value = record.get(field)
            if field not in record or not isinstance(value, types) or isinstance(value, bool):
                what = "its integer step" if field == "step" else f"its {field}"
                raise DataError(path, f"a metrics line without {what}: not a line a training run wrote; "
                                      "move the file away or choose another output_dir", row=row, field=field)
        if records and record["step"] <= records[-1]["step"]:
            raise DataError(path, f"step {record['step']} after step {records[-1]['step']}: a training run writes its "
                                  "steps in order; move the file away or choose another output_dir", row=row,
                            field="step")
        records.append(record)
    return records


def record_verdict(run_dir: Path, verdict: dict, refused: dict[str, str]) -> None:
    """Put the run's verdict (`comparison.checkpoints.run_verdict`) and its guards' refusals (step ->
    why) on metrics.jsonl's last line, the last checkpoint's, and on no other (a rerun rewrites them)."""
    records = read_metrics(run_dir)
    if records:
        _write_metrics(run_dir, records, {"verdict": verdict, "refused": refused})


def trim_metrics(run_dir: Path, up_to_step: int) -> None:
    """Keep one line per step up to `up_to_step`: later lines belong to checkpoints that a
    resumed run will write again."""
    kept: dict[int, dict] = {}
    for record in read_metrics(run_dir):
        if record["step"] <= up_to_step:
            kept[record["step"]] = record
    _write_metrics(run_dir, [r for _, r in sorted(kept.items())])


def _write_metrics(run_dir: Path, records: list[dict], verdict: dict | None = None) -> None:
    """metrics.jsonl rewritten whole, atomically, with `verdict` (the run's verdict and refusals) on its
    last line and on no other: a resumed run's verdict is not known until its compare report."""
    lines = [{k: v for k, v in r.items() if k not in ("verdict", "refused")} for r in records]
    if verdict and lines:
        lines[-1] |= verdict
    atomic_write(run_dir / METRICS, "".join(json.dumps(r, allow_nan=False) + "\n" for r in lines))
