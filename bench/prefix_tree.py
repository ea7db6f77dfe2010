"""Causal evaluation as prefix trees against the padded pass: speed and agreement.

    python bench/prefix_tree.py [--threads 1] [--rounds 2] [--naive-sample 24]

Scores the demo's pair benchmarks (`configs/demo-gemma-lora.yaml`: 300 seeded pairs of
queerbias-de:test, the validation frames of queerbias-de-contrary, the knowledge set) with the
embedded Gemma 3 270M, once through prefix trees (`scoring.causal`: what sentences share is computed
once) and once through right-padded batches, alternately, each with a fresh scorer. Reports the time
of each (the median over rounds), the share of (sentence, position) requests the trees leave to
compute, how many pairs' 3-decimal scores differ between the two, and, on a seeded sample, how many
differ from the naive reference loop (`suites.pairs.reference`) under each. Writes its table into
BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from benchmarks_md import markdown_table, write_section  # noqa: E402

from queerbias.models import load_model  # noqa: E402
from queerbias.pairs.resolve import load_pairs  # noqa: E402
from queerbias.scoring.config import ScoringConfig  # noqa: E402
from queerbias.scoring.scorer import make_scorer  # noqa: E402
from queerbias.suites.pairs.reference import naive_sentence_pair  # noqa: E402
from queerbias.suites.pairs.scoring import score_pairs  # noqa: E402

#: the demo's pair benchmarks: (name, spec, sample)
BENCHMARKS = [("bias", "queerbias-de:test", 300), ("contrary", "queerbias-de-contrary:validation", None),
              ("knowledge", "queerbias-knowledge", None)]


def scored(lm, pairs, tree: bool):
    """(seconds, 3-decimal scores, distinct prefixes / requests) of one fresh scorer's pass."""
    scorer = make_scorer(lm, ScoringConfig())
    scorer._tree = scorer._tree_matches_padded() if tree else False
    start = time.perf_counter()
    results = score_pairs(scorer, pairs)
    seconds = time.perf_counter() - start
    requests = list(scorer._logprobs)
    share = len({ids[:p + 1] for ids, p in requests}) / len(requests)
    return seconds, [(r.score_more, r.score_less) for r in results], share


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--naive-sample", type=int, default=24)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    lm = load_model("embedded:gemma-3-270m")
    config = ScoringConfig()
    rows = []
    for name, spec, sample in BENCHMARKS:
        pairs = load_pairs(spec, sample=sample, seed=0).pairs
        times = {True: [], False: []}
        for _ in range(args.rounds):
            for tree in (True, False):
                seconds, scores, share = scored(lm, pairs, tree)
                times[tree].append(seconds)
                if tree:
                    tree_scores, tree_share = scores, share
                else:
                    padded_scores = scores
        differing = sum(a != b for a, b in zip(tree_scores, padded_scores))
        chosen = random.Random(0).sample(range(len(pairs)), min(args.naive_sample, len(pairs)))
        naive = {}
        for i in chosen:
            more, less = naive_sentence_pair(lm, pairs[i], config)
            naive[i] = (round(more, 3), round(less, 3))
        off = {tree: sum(scores[i] != naive[i] for i in chosen) for tree, scores in
               ((True, tree_scores), (False, padded_scores))}
        row = {"name": f"{name} ({spec}{'' if sample is None else f', {sample} seeded'})", "pairs": len(pairs),
               "tree_s": statistics.median(times[True]), "padded_s": statistics.median(times[False]),
               "share": tree_share, "differing": differing, "naive": len(chosen), "off": off}
        rows.append(row)
        print(row, flush=True)
    table = render(rows, args)
    print(table)
    if not args.no_write:
        write_section("prefix_tree", table)


def render(rows, args) -> str:
    lines = [
        f"`python bench/prefix_tree.py --threads {args.threads} --rounds {args.rounds} --naive-sample "
        f"{args.naive_sample}`: {torch.__version__}, fp32, CPU, torch threads {args.threads}; the embedded "
        "Gemma 3 270M; median of the alternating rounds.",
        "",
    ]
    lines += markdown_table(
        ["benchmark", "pairs", "padded s", "tree s", "tree / padded", "requests left to compute",
         "pairs differing (3 decimals)", "of the naive sample differing: padded, tree"],
        [False] + [True] * 7,
        [[r["name"], str(r["pairs"]), f"{r['padded_s']:.1f}", f"{r['tree_s']:.1f}",
          f"{r['tree_s'] / r['padded_s']:.2f}x", f"{r['share']:.0%}", str(r["differing"]),
          f"{r['off'][False]}, {r['off'][True]} of {r['naive']}"] for r in rows])
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
