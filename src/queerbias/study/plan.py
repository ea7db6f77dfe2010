"""The study as commands for a scheduler: one `accelerate launch` per cell, a Slurm job array.

Each cell is an ordinary training run, so a cluster runs it with the engine it already
has: accelerate (for the processes of one cell) under Slurm (for the cells). The job-array
script has one array index per cell (`#SBATCH --array=0-(n-1)`); index i changes to the
directory the plan was made in (relative paths of the configs hold from there), appends
the cell's output to its log and records the launch (seconds, exit status, commit) in the
cell's `study-cell-launches.jsonl`, as `queerbias study` does. Resources (`--gres`,
`--time`, `--cpus-per-task`, a partition) are the user's to add.
"""

from __future__ import annotations

import os
import shlex

from queerbias.study.cells import CELL_LOG, FINETUNE, LAUNCHES, Cell


def slurm_script(cells: list[Cell], commands: list[list[str]], name: str) -> str:
    """A Slurm job-array script: index i runs cell i's command."""
    repo = FINETUNE.parents[1] if FINETUNE.is_file() else None
    commit = (f'$(git -C {shlex.quote(str(repo))} describe --always --dirty 2>/dev/null || echo unknown)'
              if repo else "unknown")
    lines = [
        "#!/bin/bash",
        f"#SBATCH --job-name={shlex.quote('queerbias-study-' + name)}",
        f"#SBATCH --array=0-{len(cells) - 1}",
        "# One array index per cell of the study (written by `queerbias study plan`); add the resources your",
        "# cluster needs (--gres, --time, --cpus-per-task, --partition). A finished cell is skipped by the",
        "# study's report; a cell that stopped resumes when its index runs again.",
        "set -uo pipefail",
        f"cd {shlex.quote(os.getcwd())}",
        "",
        "run_cell() {  # FOLDER COMMAND...: output appended to the cell's log, the launch recorded",
        '    local folder=$1; shift',
        '    mkdir -p "$folder"',
        '    local started=$(date -u +%Y-%m-%dT%H:%M:%SZ) start=$(date +%s)',
        f'    "$@" >> "$folder/{CELL_LOG}" 2>&1',
        "    local status=$?",
        f'    printf \'{{"started": "%s", "seconds": %d, "returncode": %d, "commit": "%s", "launcher": '
        f'"slurm %s"}}\\n\' "$started" "$(( $(date +%s) - start ))" "$status" "{commit}" '
        f'"${{SLURM_ARRAY_JOB_ID:-}}_${{SLURM_ARRAY_TASK_ID:-}}" >> "$folder/{LAUNCHES}"',
        "    return $status",
        "}",
        "",
        'case "${SLURM_ARRAY_TASK_ID:?run this script with sbatch}" in',
    ]
    for index, (cell, command) in enumerate(zip(cells, commands, strict=True)):
        lines.append(f"    {index}) run_cell {shlex.quote(str(cell.folder))} {shlex.join(command)} ;;  # {cell.name}")
    lines += ['    *) echo "no cell $SLURM_ARRAY_TASK_ID in this study" >&2; exit 2 ;;', "esac", ""]
    return "\n".join(lines)
