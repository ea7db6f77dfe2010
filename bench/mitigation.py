"""The mitigation methods measured on the embedded Gemma 3 270M over 3 seeds: BENCHMARKS.md's table.

A thin call of the study (`configs/study-mitigation-gemma.yaml`, docs/study.md): every
method's config × seeds 0, 1, 2 as ordinary training runs in runs/study/mitigation-gemma/
(resumed where they stopped, finished cells skipped), then its method table, with the
spread over seeds beside each figure, written into BENCHMARKS.md ("Mitigation methods").

    python bench/mitigation.py                 # run (or resume) the study, then the table
    python bench/mitigation.py --jobs 2        # two cells side by side (each gets half the cores)
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
from queerbias.study.report import write_report

REPO = Path(__file__).resolve().parents[1]
STUDY = REPO / "configs" / "study-mitigation-gemma.yaml"


FULL_TABLE = "**Method table: base"


def table(report) -> str:
    """The study's summary method table, then the full one folded (it has a column per figure and
    benchmark), with the machine and the code that measured it."""
    cells = json.loads((report.path / "status.json").read_text(encoding="utf-8"))["cells"]
    torch = sorted({(c.get("versions") or {}).get("torch") or "?" for c in cells})
    commits = sorted({commit for c in cells for commit in c["commits"]})
    methods = report.methods.read_text(encoding="utf-8").rstrip()
    summary, _, full = methods.partition(FULL_TABLE)
    return "\n".join([
        f"`python bench/mitigation.py` (= `queerbias study --config configs/study-mitigation-gemma.yaml`): "
        f"{platform.machine()}, torch {', '.join(torch)}, each method's config (configs/mitigate-gemma-*.yaml). "
        "Distance to indifference: mean over identity groups of |score - 50| (0 = every group at 50). "
        "Time: a cell's whole run on the shared machine.",
        "",
        summary.rstrip(),
        "",
        "<details><summary>The full method table (every figure of every benchmark, intervals, crossed and harmful "
        "groups, time per cell)</summary>",
        "",
        FULL_TABLE + full,
        "",
        "</details>",
        "",
        f"Code measured: {', '.join(commits) or 'unrecorded'}.",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1, help="cells side by side")
    parser.add_argument("--table-only", action="store_true", help="only the table, from finished cells")
    args = parser.parse_args()
    os.chdir(REPO)  # the study's configs and corpus paths are relative to the checkout
    if args.table_only:
        report = write_report(load_study(STUDY).output_dir)
    else:
        report = qb.study(STUDY, jobs=args.jobs)
    write_section("mitigation", table(report))


if __name__ == "__main__":
    main()
