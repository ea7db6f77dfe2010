"""Checkpoint bookkeeping for resume: completion markers, the last complete checkpoint,
clearing what a killed run left half-written, and the metrics log.

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
from queerbias.fileio import atomic_write

MARKER = "queerbias-complete"
METRICS = "metrics.jsonl"
_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")


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


def read_metrics(run_dir: Path) -> list[dict]:
    path = run_dir / METRICS
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def trim_metrics(run_dir: Path, up_to_step: int) -> None:
    """Keep one line per step up to `up_to_step`: later lines belong to checkpoints that a
    resumed run will write again."""
    kept: dict[int, dict] = {}
    for record in read_metrics(run_dir):
        if record["step"] <= up_to_step:
            kept[record["step"]] = record
    text = "".join(json.dumps(r, allow_nan=False) + "\n" for _, r in sorted(kept.items()))
    atomic_write(run_dir / METRICS, text)
