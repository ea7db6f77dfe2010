"""bf16 against fp32 training on this CPU, with 1 and 2 processes, beside a CPU-bound process.

The demo config on the embedded Gemma 3 270M trains a few LoRA steps in each setting
while a second process spins on one core (what a newcomer's busy laptop does); the
trainer's own runtime per optimizer step is the figure. It decides `precision: auto`'s
CPU choice (train/precision.py): bf16 is only worth it where the CPU has bf16
instructions, and must never stall. The CPU's bf16 flags are printed with the table.

    python bench/precision_speed.py [--steps 3]     # writes its section of BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from benchmarks_md import write_section

REPO = Path(__file__).resolve().parents[1]
SETTINGS = [("fp32", 1), ("bf16", 1), ("fp32", 2), ("bf16", 2)]


def spin(stop) -> None:
    """A CPU-bound process: the load beside the training run."""
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def train(out: Path, precision: str, processes: int, steps: int) -> float:
    """Seconds per optimizer step (the trainer's runtime over its steps)."""
    overrides = [f"output_dir={out}", f"precision={precision}", f"max_steps={steps}", f"eval_every={steps}",
                 "eval.perplexity=false", "eval.general_perplexity=false",
                 "eval.benchmarks=[{suite: pairs, data: 'queerbias-de:test', sample: 8, name: bias}]"]
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    launch = [sys.executable, "-m", "queerbias.cli", "train"] if processes == 1 else [
        str(Path(sys.executable).with_name("accelerate")), "launch", "--config_file",
        str(REPO / "configs" / "accelerate" / "cpu-2proc.yaml"), "--main_process_port", "0",
        str(REPO / "train" / "finetune.py")]
    done = subprocess.run([*launch, "--config", str(REPO / "configs" / "demo-gemma-lora.yaml"), *overrides],
                          check=True, env=env, cwd=REPO, capture_output=True, text=True)
    # the training bar's elapsed time when it reached the last step (checkpoint scoring excluded)
    minutes, seconds = re.findall(rf"\| {steps}/{steps} \[(\d+):(\d+)<", done.stderr)[-1]
    return (60 * int(minutes) + int(seconds)) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    from queerbias.train.precision import cpu_has_bf16

    stop = multiprocessing.Event()
    burner = multiprocessing.Process(target=spin, args=(stop,), daemon=True)
    burner.start()
    rows, root = [], Path(tempfile.mkdtemp(prefix="qb-precision-"))
    try:
        for precision, processes in SETTINGS:
            started = time.perf_counter()
            per_step = train(root / f"{precision}-{processes}", precision, processes, args.steps)
            rows.append((precision, processes, per_step, time.perf_counter() - started))
            print(rows[-1], flush=True)
    finally:
        stop.set()
        burner.join(timeout=5)
        shutil.rmtree(root, ignore_errors=True)
    base = {p: s for precision, p, s, _ in rows if precision == "fp32"}
    lines = [f"`python bench/precision_speed.py --steps {args.steps}`: {platform.machine()}, torch {torch.__version__}, "
             f"CPU bf16 instructions (avx512_bf16/amx_bf16): {'yes' if cpu_has_bf16() else 'no'}; the demo config "
             "(LoRA r8 on Gemma 3 270M, 16 training pairs and 1 packed corpus example per process and step, 1 torch "
             f"thread per process), {args.steps} optimizer steps, beside one CPU-bound process spinning on a core.",
             "", "| precision | processes | s per step | vs fp32 | wall s (load, base scoring, steps) |",
             "|---|---:|---:|---:|---:|"]
    for precision, processes, per_step, wall in rows:
        lines.append(f"| {precision} | {processes} | {per_step:.1f} | {per_step / base[processes]:.2f}x | {wall:.0f} |")
    write_section("precision_speed", "\n".join(lines))


if __name__ == "__main__":
    main()
