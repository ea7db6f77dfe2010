"""Fast scorer vs the naive reference loops: speed ratio and agreement.

    python bench/score_speed.py [--threads 2] [--naive-sample 60] [--distinct 300]

Measures, on the English WinoQueer v0 file from ../shared/data, the per-pair time
of `score_pairs` (batched, deduplicated) against `naive_sentence_pair` (one
forward pass per scored token, batch size 1, as the reference scripts) for a
masked LM of bert-base size and the embedded Gemma 3 270M (causal), once on the
full file (sentences repeat, as in every template benchmark; the naive time is
measured on a random sample and scaled per pair) and once on pairs in which no
sentence repeats. Ratios are measured in one run on one machine; absolute times
depend on the load of the (shared) cores. Writes the table into BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
V0 = REPO.parent / "shared" / "data" / "winoqueer-v0" / "winoqueer_benchmark.csv"
sys.path.insert(0, str(REPO / "tests"))

from benchmarks_md import markdown_table, write_section  # noqa: E402
from random_models import random_bert  # noqa: E402

from queerbias.models import load_model  # noqa: E402
from queerbias.pairs.io import read_pairs  # noqa: E402
from queerbias.scoring.config import ScoringConfig  # noqa: E402
from queerbias.scoring.scorer import make_scorer  # noqa: E402
from queerbias.suites.pairs.reference import naive_sentence_pair  # noqa: E402
from queerbias.suites.pairs.scoring import score_pairs  # noqa: E402


def distinct_pairs(pairs, n: int, seed: int):
    """Up to n pairs in which no sentence occurs twice."""
    seen, chosen = set(), []
    for pair in random.Random(seed).sample(pairs, len(pairs)):
        if pair.sent_more in seen or pair.sent_less in seen:
            continue
        seen.update((pair.sent_more, pair.sent_less))
        chosen.append(pair)
        if len(chosen) == n:
            break
    return chosen


def measure(lm, pairs, naive_sample: int, seed: int) -> dict:
    config = ScoringConfig()
    start = time.perf_counter()
    fast = score_pairs(make_scorer(lm, config), pairs)
    fast_s = time.perf_counter() - start
    sample = random.Random(seed).sample(range(len(pairs)), min(naive_sample, len(pairs)))
    start = time.perf_counter()
    naive = [naive_sentence_pair(lm, pairs[i], config) for i in sample]
    naive_s = time.perf_counter() - start
    diff = max(max(abs(round(m, 3) - fast[i].score_more), abs(round(l, 3) - fast[i].score_less))
               for i, (m, l) in zip(sample, naive))
    fast_per_pair = fast_s / len(pairs)
    naive_per_pair = naive_s / len(sample)
    return {"pairs": len(pairs), "fast_s": fast_s, "naive_pairs": len(sample),
            "naive_s": naive_s, "fast_pairs_per_s": 1 / fast_per_pair,
            "naive_pairs_per_s": 1 / naive_per_pair, "ratio": naive_per_pair / fast_per_pair,
            "max_diff": diff}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--naive-sample", type=int, default=60)
    parser.add_argument("--distinct", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--models", nargs="*", default=["masked", "causal"])
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    if not V0.is_file():
        sys.exit(f"needs the WinoQueer v0 file at {V0}")
    torch.set_num_threads(args.threads)
    pair_set = read_pairs(V0, identical="keep")
    full, distinct = pair_set.pairs, distinct_pairs(pair_set.pairs, args.distinct, args.seed)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.models:
            if kind == "masked":
                texts = [t for p in full for t in (p.sent_more, p.sent_less)]
                spec = str(random_bert(Path(tmp) / "bert", texts))
                label = "masked (bert-base size, random weights)"
            else:
                spec, label = "embedded:gemma-3-270m", "causal (embedded Gemma 3 270M)"
            lm = load_model(spec)
            for name, pairs in (("full v0 file", full), ("no repeated sentence", distinct)):
                result = measure(lm, pairs, args.naive_sample, args.seed)
                rows.append((label, name, result))
                print(label, name, {k: round(v, 4) if isinstance(v, float) else v
                                    for k, v in result.items()}, flush=True)
    table = render(rows, args)
    print(table)
    if not args.no_write:
        write_section("score_speed", table)


def render(rows, args) -> str:
    lines = [
        f"Command: `python bench/score_speed.py --threads {args.threads} --naive-sample "
        f"{args.naive_sample} --distinct {args.distinct}` (fp32, CPU, torch threads = "
        f"{args.threads}).",
        "",
    ]
    lines += markdown_table(
        ["model", "pairs", "fast pairs/s", "naive pairs/s (sample)", "speed-up", "max abs diff of pair scores"],
        [False, False, True, True, True, True],
        [[label, f"{name} ({r['pairs']})", f"{r['fast_pairs_per_s']:.1f}",
          f"{r['naive_pairs_per_s']:.2f} ({r['naive_pairs']})", f"**{r['ratio']:.1f}x**", f"{r['max_diff']:.3g}"]
         for label, name, r in rows])
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
