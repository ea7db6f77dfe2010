"""The mitigation methods measured on the embedded Gemma 3 270M: one table for BENCHMARKS.md.

Runs each method's config (configs/mitigate-gemma-<method>.yaml, and the demo) as
`queerbias train` in its own folder, one after the other, then reads what the runs wrote:
the change of the distance to indifference (bias and soft, mean over groups of
|score - 50|) from base to the final checkpoint on the held-out pairs (queerbias-de:test)
and on English WinoQueer v0, with the paired, group-stratified bootstrap interval of
`queerbias compare`; the change of perplexity on the shipped neutral German text and on
the corpus's validation split; and the wall time of the run.

    python bench/mitigation.py                      # all methods, then its BENCHMARKS.md section
    python bench/mitigation.py --methods equalise   # rerun one; the others are read as they are
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
METHODS = {  # row label -> config
    "lm (continued pretraining)": "configs/mitigate-gemma-lm.yaml",
    "lm, targeted (transgender, nonbinary)": "configs/mitigate-gemma-targeted.yaml",
    "cda (two-sided)": "configs/mitigate-gemma-cda.yaml",
    "equalise (issue's formula: per-pair term)": "configs/mitigate-gemma-equalise-pair.yaml",
    "equalise": "configs/mitigate-gemma-equalise.yaml",
    "cda + equalise": "configs/mitigate-gemma-cda-equalise.yaml",
    "dpo": "configs/mitigate-gemma-dpo.yaml",
    "demo (`bash scripts/run.sh`)": "configs/demo-gemma-lora.yaml",
}


def run(config: str, out: Path) -> float:
    """Train one config into `out` (resuming what is there); returns the wall seconds.

    The base model's scores are the same for every method (same model, pairs and scoring);
    the first run's `base/` is copied into the later runs, whose scorer recognises the
    finished run by its key (model fingerprint, data checksum, scoring id) and skips it.
    Times of later runs therefore exclude the base scoring (perplexity still runs).
    """
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}
    donor = next((d / "base" for d in sorted(RUNS.glob("*")) if (d / "base" / "bias" / "summary.json").is_file()
                  and (d / "base" / "bias-ood-en" / "summary.json").is_file()), None)
    if donor is not None and not (out / "base").exists():
        shutil.copytree(donor, out / "base", ignore=shutil.ignore_patterns(".partial"))
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "queerbias.cli", "train", "--config", str(REPO / config),
                    f"output_dir={out}"], check=True, env=env, cwd=REPO)
    seconds = time.perf_counter() - started
    (out / "bench-wall.json").write_text(json.dumps({"wall_s": round(seconds, 1)}))
    return seconds


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
    wall = json.loads((run_dir / "bench-wall.json").read_text())["wall_s"] if (
        run_dir / "bench-wall.json").is_file() else None
    return " | ".join([
        f"| {label} (`{Path(config).name}`, {metrics[-1]['step']} steps)",
        distance_cell(run_dir, "compare", "bias"), distance_cell(run_dir, "compare", "soft"),
        distance_cell(run_dir, "compare-bias-ood-en", "bias"),
        distance_cell(run_dir, "compare-bias-ood-en", "soft"),
        change(metrics, "general_perplexity"), change(metrics, "perplexity"),
        f"{wall / 60:.1f} min |" if wall else "n/a |"])


def table(methods: dict[str, str]) -> str:
    lines = [
        f"`python bench/mitigation.py`: {platform.machine()}, torch {torch.__version__}, the configs' "
        "settings (LoRA r8, bf16 autocast, 1 torch thread, 1 process; the demo: see its config). "
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
    for label, config in methods.items():
        run_dir = RUNS / Path(config).stem
        if (run_dir / "metrics.jsonl").is_file():
            lines.append(row(label, config, run_dir))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="*", help="config stems to (re)run, e.g. mitigate-gemma-dpo")
    parser.add_argument("--table-only", action="store_true", help="rewrite the table from finished runs")
    args = parser.parse_args()
    if not args.table_only:
        for config in METHODS.values():
            stem = Path(config).stem
            if args.methods is None or stem in args.methods:
                run(config, RUNS / stem)
    write_section("mitigation", table(METHODS))


if __name__ == "__main__":
    main()
