"""The mitigation methods measured on the embedded Gemma 3 270M: one table for BENCHMARKS.md.

Runs each method's config (configs/mitigate-gemma-<method>.yaml, and the demo) as
`queerbias train` in its own fresh folder, one after the other (each scores its own base
model), then reads what the runs wrote:
the change of the distance to indifference (bias and soft, mean over groups of
|score - 50|) from base to the final checkpoint on the held-out pairs (queerbias-de:test)
and on English WinoQueer v0, with the paired, group-stratified bootstrap interval of
`queerbias compare`; the change of perplexity on the shipped neutral German text and on
the corpus's validation split; and the wall time of the run.

    python bench/mitigation.py                      # every method without a finished run, then the table
    python bench/mitigation.py --methods mitigate-gemma-dpo   # (re)run these from scratch only
    python bench/mitigation.py --table-only         # only rewrite the table from finished runs

Set QUEERBIAS_SHARED_DATA when the public data is not in ../shared/data (English v0).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import torch
from benchmarks_md import write_section

REPO = Path(__file__).resolve().parents[1]
RUNS = REPO / "runs" / "bench" / "mitigation"
METHODS = {  # row label -> (config, processes)
    "lm (continued pretraining)": ("configs/mitigate-gemma-lm.yaml", 1),
    "lm, targeted (transgender, nonbinary)": ("configs/mitigate-gemma-targeted.yaml", 1),
    "cda (two-sided)": ("configs/mitigate-gemma-cda.yaml", 1),
    "equalise, the issue's formula (per-pair term only)": ("configs/mitigate-gemma-equalise-pair.yaml", 1),
    "equalise (+ group term, 4 groups per batch)": ("configs/mitigate-gemma-equalise.yaml", 1),
    "equalise + sign term": ("configs/mitigate-gemma-equalise-sign.yaml", 1),
    "cda + equalise": ("configs/mitigate-gemma-cda-equalise.yaml", 1),
    "dpo": ("configs/mitigate-gemma-dpo.yaml", 1),
    "demo, 2 processes (`bash scripts/run.sh`; 300 held-out and 200 OOD pairs)": ("configs/demo-gemma-lora.yaml", 2),
}


def run(config: str, out: Path, processes: int) -> float:
    """Train one config into `out` from scratch (base scoring included); returns the wall seconds."""
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}
    launch = [sys.executable, "-m", "queerbias.cli", "train"] if processes == 1 else [
        str(Path(sys.executable).with_name("accelerate")), "launch", "--config_file",
        str(REPO / "configs" / "accelerate" / "cpu-2proc.yaml"), "--main_process_port", "0",
        str(REPO / "train" / "finetune.py")]
    shutil.rmtree(out, ignore_errors=True)
    commit = code_version()
    started = time.perf_counter()
    subprocess.run([*launch, "--config", str(REPO / config), f"output_dir={out}"], check=True, env=env,
                   cwd=REPO)
    seconds = time.perf_counter() - started
    (out / "bench-wall.json").write_text(json.dumps({"wall_s": round(seconds, 1), "commit": commit}))
    return seconds


def code_version() -> str:
    """The commit the run measured, marked when tracked files differed from it."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()

    return git("rev-parse", "--short", "HEAD") + (" with changes" if git("status", "--porcelain", "-uno") else "")


def distance_cell(run_dir: Path, compare: str, score: str) -> str:
    path = run_dir / compare / "delta.json"
    if not path.is_file():
        return "n/a"
    distance = json.loads(path.read_text())["comparisons"][-1]["distance"]
    low, high = distance[f"ci_{score}"]
    before, after = distance[f"{score}_before"], distance[f"{score}_after"]
    digits = 1 if score == "bias" else 2
    relative = f" ({100 * (after - before) / before:+.0f}%)" if before else ""
    return (f"{before:.{digits}f} → {after:.{digits}f}{relative} "
            f"[{low:+.{digits}f}, {high:+.{digits}f}]")


def change(metrics: list[dict], key: str) -> str:
    first, last = metrics[0].get(key), metrics[-1].get(key)
    if not first or not last:
        return "n/a"
    return f"{first:.1f} → {last:.1f} ({100 * (last - first) / first:+.1f}%)"


def row(label: str, config: str, run_dir: Path) -> str:
    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    wall = json.loads((run_dir / "bench-wall.json").read_text())["wall_s"]
    return " | ".join([
        f"| {label} (`{Path(config).name}`, {metrics[-1]['step']} steps)",
        distance_cell(run_dir, "compare/bias", "bias"), distance_cell(run_dir, "compare/bias", "soft"),
        distance_cell(run_dir, "compare/bias-ood-en", "bias"),
        distance_cell(run_dir, "compare/bias-ood-en", "soft"),
        change(metrics, "general_perplexity"), change(metrics, "perplexity"),
        f"{wall / 60:.1f} min |"])


def table(methods: dict[str, str]) -> str:
    lines = [
        f"`python bench/mitigation.py`: {platform.machine()}, torch {torch.__version__}, the configs' "
        "settings (LoRA r8, bf16 autocast, 1 torch thread per process, 30 steps, 1 process; the demo: "
        "24 steps in 2 processes). "
        "Distance to indifference (mean over identity groups of |score - 50|, 0 = every group at 50) "
        "from base to the last checkpoint, with the 95% paired, group-stratified bootstrap interval "
        "of its change; held-out: all queerbias-de:test pairs (stereotype predicates never trained on); "
        "OOD: 400 seeded English WinoQueer v0 pairs. Perplexity: the shipped neutral German text "
        "(general) and the demo corpus's validation split (in-domain). Time: the whole run (model "
        "load, base and checkpoint evaluation, training, compare report) on the shared machine.",
        "",
        "| method | held-out bias distance | held-out soft distance | OOD (en) bias distance | "
        "OOD (en) soft distance | general perplexity | in-domain perplexity | time |",
        "|---|---|---|---|---|---|---|---|",
    ]
    commits: dict[str, list[str]] = {}
    for label, (config, _) in methods.items():
        run_dir = RUNS / Path(config).stem
        if (run_dir / "bench-wall.json").is_file():  # finished
            lines.append(row(label, config, run_dir))
            commit = json.loads((run_dir / "bench-wall.json").read_text()).get("commit", "unrecorded")
            commits.setdefault(commit, []).append(label)
    lines += ["", "Code measured: " + "; ".join(
        f"commit {commit} ({', '.join(labels)})" for commit, labels in commits.items()) + "."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="*", help="config stems to (re)run, e.g. mitigate-gemma-dpo")
    parser.add_argument("--table-only", action="store_true", help="rewrite the table from finished runs")
    args = parser.parse_args()
    if not args.table_only:
        for config, processes in METHODS.values():
            out = RUNS / Path(config).stem
            wanted = out.name in args.methods if args.methods is not None else not (out / "bench-wall.json").is_file()
            if wanted:
                run(config, out, processes)
    write_section("mitigation", table(METHODS))


if __name__ == "__main__":
    main()
