"""The study for a scheduler: Slurm job arrays that run each cell as `queerbias study` would.

One launcher for local and cluster runs: task i of the cell array runs `queerbias study cell
STUDY i`, which runs the cell's command (`cells.launch_command`, the same one process or the
same `accelerate launch --config_file`), appends to its log and records the launch as it starts
and when it ends, with the commit and package versions (`execution.run_cell`).

Three scripts, and one step before them:
- `queerbias study prefetch STUDY`, where the network is: every model and data set the cells
  read goes into the caches (`train.prefetch`), so no task downloads and none races another for
  a file;
- `slurm-base.sh`: task m scores model m's base once into `STUDY/base/<model>/`
  (`queerbias study base STUDY m`); the cells then only read it (`train.shared_base` takes no lock
  where every evaluation is published, and no rank of a multi-process cell waits for another
  cell's base at the process group's barrier);
- the cell array, started after every base task succeeded (`--dependency=afterok`);
- `slurm-submit.sh` submits the two in that order.

Paths are resolved when a task runs, on its node, not when the plan was made: the working
directory is where `sbatch` ran (`SLURM_SUBMIT_DIR`; `QUEERBIAS_WORKDIR` overrides it), the
interpreter `QUEERBIAS_PYTHON`, else the planning one where the node has it, else `python3` on
the PATH; threads come from the allocation (`SLURM_CPUS_PER_TASK`). The caches named at plan
time are kept unless the task's environment names its own, and tasks run offline
(`HF_HUB_OFFLINE=1` unless set), so a model `study prefetch` did not fetch is a one-line refusal
rather than a download in the middle of an array. Resources (`--gres`, `--time`,
`--cpus-per-task`, a partition) are the user's to add.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from queerbias.study.cells import Cell

BASE_SCRIPT = "slurm-base.sh"
SUBMIT_SCRIPT = "slurm-submit.sh"
#: the caches `study prefetch` fills, carried into the tasks where they were set when the plan was made
CACHES = ("HF_HOME", "HF_HUB_CACHE", "HF_DATASETS_CACHE", "QUEERBIAS_CACHE", "QUEERBIAS_SHARED_DATA")


def _task(root: Path, action: str, jobs: list[str], name: str, what: str) -> str:
    """One array script: task i runs `queerbias study ACTION STUDY i`, paths resolved on the node."""
    here = Path.cwd()
    study = os.path.relpath(Path(root).absolute(), here)
    caches = [f"export {key}=${{{key}:-{shlex.quote(os.environ[key])}}}" for key in CACHES if os.environ.get(key)]
    planned = "".join("\\" + char if char in '\\"$`' else char for char in str(here))  # inside "..."
    missing = (f"queerbias study: no $study/plan.json under $PWD; submit from the folder the plan was made in "
               f"({planned}) or set QUEERBIAS_WORKDIR")
    return "\n".join([
        "#!/bin/bash",
        f"#SBATCH --job-name={shlex.quote(f'queerbias-{what}-{name}')}",
        f"#SBATCH --array=0-{len(jobs) - 1}",
        f"# One array index per {what} of the study (written by `queerbias study plan`); add the resources your",
        "# cluster needs (--gres, --time, --cpus-per-task, --partition). Submit both arrays with slurm-submit.sh",
        "# after `queerbias study prefetch STUDY`; then: queerbias study report STUDY",
        *(f"#   {index}: {job}" for index, job in enumerate(jobs)),
        "set -euo pipefail",
        "# paths resolved here, on the node: where sbatch ran (or QUEERBIAS_WORKDIR), and the interpreter",
        'cd "${QUEERBIAS_WORKDIR:-${SLURM_SUBMIT_DIR:-$PWD}}"',
        f"study={shlex.quote(study)}",
        f'[ -f "$study/plan.json" ] || {{ echo "{missing}" >&2; exit 2; }}',
        'python=${QUEERBIAS_PYTHON:-}',
        f'[ -n "$python" ] || {{ python={shlex.quote(sys.executable)}; [ -x "$python" ] || python=$(command -v python3); }}',
        "# threads from the allocation; the caches study prefetch filled, read offline",
        "threads=${SLURM_CPUS_PER_TASK:-1}",
        "export OMP_NUM_THREADS=$threads MKL_NUM_THREADS=$threads TOKENIZERS_PARALLELISM=false",
        *caches,
        "export HF_HUB_OFFLINE=${HF_HUB_OFFLINE:-1} HF_DATASETS_OFFLINE=${HF_DATASETS_OFFLINE:-1}",
        f'exec "$python" -m queerbias.cli study {action} "$study" "${{SLURM_ARRAY_TASK_ID:?run this script with '
        'sbatch}"',
        "",
    ])


def slurm_script(cells: list[Cell], root: Path, name: str) -> str:
    """The cell array: task i runs cell i of the study folder `root`."""
    return _task(root, "cell", [cell.name for cell in cells], name, "cell")


def base_script(models: list[str], root: Path, name: str) -> str:
    """The base array: task m scores model m's base evaluations once (`queerbias study base`)."""
    return _task(root, "base", models, name, "base")


def submit_script(cells_script: Path, base: Path) -> str:
    """Submits the base array, then the cell array once every base task succeeded; the scripts are found
    beside this one, so the study folder may move with them."""
    here = base.parent
    return "\n".join([
        "#!/bin/bash",
        "# The study on a Slurm cluster (written by `queerbias study plan`). First, where the network is:",
        "#   queerbias study prefetch STUDY",
        "# then, from the folder the plan was made in: bash THIS_SCRIPT. The cell array starts once every",
        "# base task succeeded. Afterwards: queerbias study report STUDY",
        "set -euo pipefail",
        'here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)',
        f'base=$(sbatch --parsable "$here/{base.name}")',
        f'sbatch --dependency=afterok:"${{base%%;*}}" "$here/"{shlex.quote(os.path.relpath(cells_script, here))}',
        "",
    ])
