"""A study's checkpoints judged on frames no run saw: queerbias-de-unseen-frames (issue 32).

    python bench/unseen_frames.py --study runs/study/do-no-harm-scaled [--every] [--threads 2]
        [--section do-no-harm-scaled-unseen] [--sample N]

A do-no-harm study judges its runs on the three test frames of queerbias-de-contrary, chosen
as the base's most contrary of 53 candidates: one sentence shape ("In Foren liest man, ...")
and the groups the base put far from the stereotype there. The 16 candidates no part chose and
no run trains on (`queerbias-de-unseen-frames:test`) judge the same checkpoints on more frames
and more shapes. This scores the base once per model (into the study's `base/MODEL/unseen-test`,
beside its other base scores) and each cell's final checkpoint (every evaluated checkpoint with
`--every`) into `judged/MODEL/RUN/seed-S/checkpoint-N/unseen-test` (a checkpoint folder is a
model's input and is not written to), through the store (a killed run resumes), then prints the
checkpoint table of `bench/do_no_harm.py` on them: the stereotype excess, the soft distance's
change and the groups moved above 60, beside the groups that crossed 50 on the validation
frames. Scored as `queerbias score` does (the default scoring configuration).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
import yaml
from benchmarks_md import write_section
from do_no_harm import checkpoint_table, evaluated_checkpoints, study_cells

import queerbias as qb

REPO = Path(__file__).resolve().parents[1]
DATA = "queerbias-de-unseen-frames:test"
BENCHMARK = "unseen-test"


def checkpoints(cell: Path, every: bool) -> list[Path]:
    """The cell's evaluated checkpoints by step: all of them, or the last (the one a study judges)."""
    found = [path for _, path in evaluated_checkpoints(cell)]
    return found if every else found[-1:]


def scored_folder(study: Path, folder: Path) -> Path:
    """Where the scores of a cell's `base` or `checkpoint-N` folder on DATA lie: the base of the
    cell's model once for the whole study, a checkpoint's under `judged/` (cells: runs/MODEL/RUN/seed-S)."""
    model, *_ = folder.relative_to(study / "runs").parts
    return study / "base" / model if folder.name == "base" else study / "judged" / folder.relative_to(study / "runs")


def score_study(study: Path, every: bool, sample: int | None) -> list[Path]:
    """Score the base of every model and the cells' checkpoints on DATA; returns the cells scored."""
    cells = [cell for cell in study_cells(study) if checkpoints(cell, every)]
    if not cells:
        raise SystemExit(f"{study}: no cell with a checkpoint")
    options = {"sample": sample, "seed": 0} if sample else {}
    for cell in cells:
        model = yaml.safe_load((cell / "study-cell.yaml").read_text(encoding="utf-8"))["model"]
        qb.score(model, DATA, out=scored_folder(study, cell / "base") / BENCHMARK, label="base", **options)
        for checkpoint in checkpoints(cell, every):
            qb.score(str(checkpoint), DATA, out=scored_folder(study, checkpoint) / BENCHMARK, label=checkpoint.name,
                     **options)
    return cells


def base_lines(study: Path, cells: list[Path]) -> list[str]:
    """Per model, the base's figures that the table's checkpoints are read against."""
    lines = []
    for folder in sorted({scored_folder(study, cell / "base") for cell in cells}):
        summary = json.loads((folder / BENCHMARK / "summary.json").read_text(encoding="utf-8"))
        lines.append(f"Base ({folder.name}): {summary['overall']['n']} pairs, stereotype excess "
                     f"{summary['direction']['stereotype_excess']:.2f}, soft distance {summary['distance']['soft']:.2f}, "
                     f"binary distance {summary['distance']['bias']:.2f} (coin-flip floor "
                     f"{summary['noise_floor']['floor']:.2f}).")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", type=Path, required=True)
    parser.add_argument("--every", action="store_true", help="every evaluated checkpoint, not only the last")
    parser.add_argument("--sample", type=int, help="score a seeded sample of N pairs (a quick look)")
    parser.add_argument("--validation", default="contrary", help="the benchmark read for crossings at each checkpoint")
    parser.add_argument("--section", help="the BENCHMARKS.md section it writes (none: print only)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    cells = score_study(args.study, args.every, args.sample)
    study = args.study.resolve()
    shown = study.relative_to(REPO) if study.is_relative_to(REPO) else study
    text = (f"`python bench/unseen_frames.py --study {shown}{' --every' if args.every else ''}"
            f"{f' --sample {args.sample}' if args.sample else ''}`: `{DATA}`, torch {torch.__version__}, "
            f"{args.threads} thread(s).\n\n" + "\n".join(base_lines(args.study, cells)) + "\n\n"
            + checkpoint_table(cells, BENCHMARK, args.validation, lambda folder: scored_folder(args.study, folder)))
    print(text)
    if args.section:
        write_section(args.section, text)


if __name__ == "__main__":
    main()
