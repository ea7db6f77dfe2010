"""How long a training config's typo takes to be reported (issue 33: it took 76-104 s on a busy
machine, because reading the config imported torch and transformers first).

Runs each command a user would type with a config whose one key is misspelt (`learning_rat`)
and times it from start to the one-line refusal (wall time and the CPU time of the process and
its children), next to `python -c "import torch, transformers"` in the same rounds as the yardstick
of what the heavy imports would cost on this machine now. The rounds alternate the commands, so
all see the same load.

    python bench/config_typo.py --rounds 5 [--write]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks_md import write_section

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
TYPO = "learning_rat"


def commands(config: Path) -> dict[str, list[str]]:
    found = {
        "queerbias train --config typo.yaml": [str(BIN / "queerbias"), "train", "--config", str(config)],
        "python train/finetune.py --config typo.yaml": [sys.executable, str(REPO / "train/finetune.py"),
                                                         "--config", str(config)],
        "import torch, transformers (the yardstick)": [sys.executable, "-c", "import torch, transformers"],
    }
    if shutil.which("accelerate", path=str(BIN)):
        found["accelerate launch train/finetune.py --config typo.yaml"] = [
            str(BIN / "accelerate"), "launch", "--num_processes", "1", "--num_machines", "1", "--mixed_precision",
            "no", "--dynamo_backend", "no", str(REPO / "train/finetune.py"), "--config", str(config)]
    return found


def timed(command: list[str], expect_refusal: bool) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, with children) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if expect_refusal and (done.returncode == 0 or f"'{TYPO}' is unknown" not in done.stderr
                           or "did you mean 'learning_rate'" not in done.stderr):
        raise SystemExit(f"{command}: expected the typo's refusal, got status {done.returncode}: {done.stderr[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="write the table into BENCHMARKS.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "typo.yaml"
        text = (REPO / "configs/demo-gemma-lora.yaml").read_text(encoding="utf-8")
        config.write_text(text + f"\n{TYPO}: 0.001\n", encoding="utf-8")
        found = commands(config)
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in found}
        for _ in range(args.rounds):
            for name, command in found.items():
                results[name].append(timed(command, expect_refusal="yardstick" not in name))
    load = os.getloadavg()[0]
    lines = [f"`python bench/config_typo.py --rounds {args.rounds}`: {platform.machine()}, {os.cpu_count()} cores, "
             f"load average {load:.1f} at the end (the machine was shared); median of {args.rounds} alternating "
             "rounds. A config with `learning_rat:` is refused with \"did you mean 'learning_rate'?\".", "",
             "| command | wall s (median) | wall s (max) | CPU s (median) |", "|---|---:|---:|---:|"]
    for name, values in results.items():
        walls, cpus = [w for w, _ in values], [c for _, c in values]
        lines.append(f"| `{name}` | {statistics.median(walls):.2f} | {max(walls):.2f} | {statistics.median(cpus):.2f} |")
    print("\n".join(lines))
    if args.write:
        write_section("config_typo", "\n".join(lines))


if __name__ == "__main__":
    main()
