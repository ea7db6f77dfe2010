"""How many pair decisions bfloat16 changes against float32, with the real embedded Gemma (CPU).

    python bench/bf16_flips.py [--threads 2] [--sample 300] [--v0 FILE]

A decision flips when a pair is biased under one precision and not under the other (a tie
counts as not biased, as in the bias score). Only real weights make this meaningful, so it
is measured here, where the embedded Gemma 3 270M is, and reported beside the GPU table
(BENCHMARKS.md, section bf16_flips). On CPU the full sets take long, so by default a seeded
sample of each set is scored (the sample size is in the table; `--sample 0` = all pairs).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
from scipy.stats import binomtest

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from benchmarks_md import write_section  # noqa: E402
from gpu_assets import SHARED_V0  # noqa: E402

from queerbias.models import load_model  # noqa: E402
from queerbias.pairs.io import read_pairs  # noqa: E402
from queerbias.pairs.resolve import load_pairs  # noqa: E402
from queerbias.pairs.sampling import sample_pairs  # noqa: E402
from queerbias.scoring.config import ScoringConfig  # noqa: E402
from queerbias.scoring.scorer import make_scorer  # noqa: E402
from queerbias.suites.pairs.scoring import score_pairs  # noqa: E402

MODEL = "embedded:gemma-3-270m"


def compare(full, half) -> dict:
    flips = sum(a.biased != b.biased for a, b in zip(full, half))
    ties = sum(a.neutral != b.neutral for a, b in zip(full, half))
    deltas = [abs(x - y) for a, b in zip(full, half)
              for x, y in ((a.score_more, b.score_more), (a.score_less, b.score_less))]
    bias_full = 100 * sum(a.biased for a in full) / len(full)
    bias_half = 100 * sum(b.biased for b in half) / len(half)
    return {"n": len(full), "flips": flips, "ties": ties,
            "ci": binomtest(flips, len(full)).proportion_ci(confidence_level=0.95, method="wilson"),
            "mean_delta": sum(deltas) / len(deltas), "max_delta": max(deltas),
            "bias_full": bias_full, "bias_half": bias_half}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--sample", type=int, default=300, help="pairs per set (0 = all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--v0", type=Path, default=SHARED_V0)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    sets = {"queerbias-de": load_pairs("queerbias-de")}
    if args.v0.is_file():
        sets["WinoQueer v0"] = read_pairs(args.v0, identical="keep")
    sets = {name: sample_pairs(s, args.sample or None, args.seed) for name, s in sets.items()}
    results, seconds = {}, {}
    scores = {name: {} for name in sets}
    for dtype in ("float32", "bfloat16"):
        lm = load_model(MODEL, dtype=dtype)
        for name, pair_set in sets.items():
            started = time.perf_counter()
            scores[name][dtype] = score_pairs(make_scorer(lm, ScoringConfig()), pair_set.pairs)
            seconds[name, dtype] = time.perf_counter() - started
            print(name, dtype, f"{seconds[name, dtype]:.0f} s", flush=True)
        del lm
    for name in sets:
        results[name] = compare(scores[name]["float32"], scores[name]["bfloat16"])
        print(name, results[name], flush=True)
    table = render(results, sets, seconds, args)
    print(table)
    if not args.no_write:
        write_section("bf16_flips", table)


def render(results: dict, sets: dict, seconds: dict, args) -> str:
    sample = (f"a seeded sample of {args.sample} pairs per set (seed {args.seed}; the full sets take "
              "too long on this CPU)" if args.sample else "every pair")
    lines = [
        f"`python bench/bf16_flips.py --threads {args.threads} --sample {args.sample}`: the embedded "
        f"Gemma 3 270M (real weights) scored in float32 and in bfloat16 on CPU ({torch.__version__}, "
        f"{args.threads} threads), reference method, {sample}.",
        "",
        "| pair set | pairs | decisions flipped | 95% CI (Wilson) | ties changed | bias score fp32 → bf16 | "
        "mean abs Δ sentence score | max abs Δ | s fp32 / bf16 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in results.items():
        low, high = r["ci"].low, r["ci"].high
        lines.append(
            f"| {name} | {r['n']} | {r['flips']} ({100 * r['flips'] / r['n']:.1f}%) | "
            f"{100 * low:.1f}–{100 * high:.1f}% | {r['ties']} | {r['bias_full']:.1f} → {r['bias_half']:.1f} | "
            f"{r['mean_delta']:.3f} | {r['max_delta']:.3f} | "
            f"{seconds[name, 'float32']:.0f} / {seconds[name, 'bfloat16']:.0f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
