"""The study for a scheduler: a Slurm job array whose index i runs cell i as `queerbias study` would.

One launcher for local and cluster runs: array task i runs `queerbias study cell STUDY i`
with the interpreter that made the plan, which runs the cell's command (`cells.launch_command`,
the same one process or the same `accelerate launch --config_file`), appends to its log and
records the launch as it starts and when it ends, with the commit and package versions
(`execution.run_cell`). Resources (`--gres`, `--time`, `--cpus-per-task`, a partition) are the
user's to add.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from queerbias.study.cells import Cell


def slurm_script(cells: list[Cell], root: Path, name: str) -> str:
    """A Slurm job-array script over the cells of the study folder `root`."""
    task = [sys.executable, "-m", "queerbias.cli", "study", "cell", str(Path(root).absolute())]
    lines = [
        "#!/bin/bash",
        f"#SBATCH --job-name={shlex.quote('queerbias-study-' + name)}",
        f"#SBATCH --array=0-{len(cells) - 1}",
        "# One array index per cell of the study (written by `queerbias study plan`); add the resources your",
        "# cluster needs (--gres, --time, --cpus-per-task, --partition). Each index runs its cell exactly as",
        "# `queerbias study` does (command, log, launch record); a finished cell is skipped, one that stopped",
        "# resumes. Then: queerbias study report STUDY",
        *(f"#   {index}: {cell.name}" for index, cell in enumerate(cells)),
        "set -euo pipefail",
        f"cd {shlex.quote(os.getcwd())}",
        f'exec {shlex.join(task)} "${{SLURM_ARRAY_TASK_ID:?run this script with sbatch}}"',
        "",
    ]
    return "\n".join(lines)
