"""The mitigation methods measured on the embedded Gemma 3 270M over 3 seeds: BENCHMARKS.md's method table.

A thin call of a study (docs/study.md): every method's config (`configs/study-mitigation-gemma.yaml`)
× seeds 0, 1, 2 as ordinary training runs in the study's folder (resumed where they stopped,
finished cells skipped), then its method table, with the spread over seeds beside each figure,
written into BENCHMARKS.md (section "mitigation"). Studies of one issue's experiments live in
research/<topic>/ with their own scripts.

    python bench/mitigation.py                 # run (or resume) the methods study, then its table
    python bench/mitigation.py --jobs 2        # two cells side by side (half the cores each)
    python bench/mitigation.py --table-only    # only the table, from the cells already finished

Set QUEERBIAS_SHARED_DATA when the public data is not in ../shared/data (English v0).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from pathlib import Path

from benchmarks_md import write_section

import queerbias as qb
from queerbias.study.config import load_study
from queerbias.study.report_folder import write_report

REPO = Path(__file__).resolve().parents[1]
STUDY = REPO / "configs" / "study-mitigation-gemma.yaml"
SECTION = "mitigation"


FULL_TABLE = "**Method table: base"


def table(report, study: Path, command: str) -> str:
    """The study's summary method table, with the machine and the code that measured it; the full table
    (a column per figure and benchmark) stays in the study's report."""
    cells = json.loads((report.path / "status.json").read_text(encoding="utf-8"))["cells"]
    ran = [c for c in cells if c.get("versions")]  # a cell that never ran has no versions to name
    torch = sorted({c["versions"].get("torch") or "?" for c in ran})
    commits = sorted({commit for c in cells for commit in c["commits"]})
    summary = report.methods.read_text(encoding="utf-8").rstrip().partition(FULL_TABLE)[0]
    return "\n".join([
        f"`{command}` (= `queerbias study --config {study.relative_to(REPO).as_posix()}`): "
        f"{platform.machine()}, torch {', '.join(torch)}, each run's config as the study file names it. "
        "Distance to indifference: mean over identity groups of |score - 50| (0 = every group at 50). "
        "Time: a cell's whole run on the shared machine.",
        "",
        summary.rstrip(),
        "",
        f"The full method table (every figure of every benchmark, intervals, time per cell): "
        f"{report.methods.relative_to(REPO).as_posix() if report.methods.is_relative_to(REPO) else report.methods}.",
        "",
        f"Code measured: {', '.join(commits) or 'unrecorded'}.",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1, help="cells side by side")
    parser.add_argument("--table-only", action="store_true", help="only the table, from finished cells")
    args = parser.parse_args()
    study, section = STUDY, SECTION
    os.chdir(REPO)  # the study's configs and corpus paths are relative to the checkout
    if args.table_only:
        report = write_report(load_study(study).output_dir)
    else:
        report = qb.study(study, jobs=args.jobs)
    write_section(section, table(report, study, "python bench/mitigation.py"))


if __name__ == "__main__":
    main()
