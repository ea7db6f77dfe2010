"""Judge a candidate mitigation once on the frozen test split of queerbias-de-shapes (issues 52 and 53).

    python research/association/judge.py --run runs/train/RUN --candidate NAME [--seed S] [--threads 2]
        [--out runs/research/association/judged] [--sample-frames N]

`--run` is a finished training run (its `final/` adapter or model, its `compare/` reports and
`metrics.jsonl`). The script
1. checks that `queerbias-de-shapes:test` has the checksum frozen in `targets.yaml` (and, through the
   registry, in data/benchmarks.yaml);
2. refuses a candidate whose model (its fingerprint) is already in `ledger.jsonl`: a test split is
   scored once per candidate, and every candidate scored stays listed there;
3. scores the base once (kept in OUT/base) and the candidate's final model on the test split, compares
   them (frame-clustered intervals, the shift tests), reads the run's own knowledge and general
   perplexity guards, and checks every target of `targets.yaml`;
4. appends the candidate, its figures and its verdict to `ledger.jsonl` and prints them.

A candidate recipe meets issue 53 only if each of its seeds does. `--sample-frames` (a smoke check on
a frame sample) never writes the ledger.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
from pathlib import Path

import torch
import yaml
from scipy import stats

import queerbias as qb
from queerbias.pairs.resolve import load_pairs
from queerbias.report.paired_stats import adjust_pvalues

HERE = Path(__file__).resolve().parent
TARGETS = HERE / "targets.yaml"
LEDGER = HERE / "ledger.jsonl"
SPEC = "queerbias-de-shapes:test"


def ledger() -> list[dict]:
    if not LEDGER.is_file():
        return []
    return [json.loads(line) for line in LEDGER.read_text(encoding="utf-8").splitlines() if line.strip()]


def base_model(run: Path) -> str:
    return yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8"))["model"]


def knowledge_guard(run: Path, targets: dict) -> dict:
    """The run's own knowledge comparison (base against the last checkpoint): the accuracy's change and the
    groups significantly below chance after (one-sided binomial test, Holm over groups)."""
    document = json.loads((run / "compare" / "knowledge" / "delta.json").read_text(encoding="utf-8"))
    last = max(document["comparisons"], key=lambda c: c["after"].get("step") or 0)
    groups = list(last["groups"].items())
    p = [stats.binomtest(round(e["accuracy_after"] * e["n"] / 100), e["n"], 0.5, alternative="less").pvalue
         for _, e in groups]
    below = [name for (name, _), adjusted in zip(groups, adjust_pvalues(p, "holm"))
             if adjusted < targets["knowledge_below_chance_alpha"]]
    return {"accuracy_before": last["overall"]["accuracy_before"], "accuracy_after": last["overall"]["accuracy_after"],
            "delta": last["overall"]["delta_accuracy"], "below_chance": below}


def general_perplexity(run: Path) -> dict:
    lines = [json.loads(line) for line in (run / "metrics.jsonl").read_text(encoding="utf-8").splitlines()]
    base = next(line for line in lines if line.get("step") == 0)["general_perplexity"]
    last = max((line for line in lines if "general_perplexity" in line), key=lambda line: line["step"])
    return {"before": base, "after": last["general_perplexity"], "change_pct": 100.0 * (last["general_perplexity"]
                                                                                        / base - 1)}


def verdict(comparison: dict, knowledge: dict, perplexity: dict, targets: dict) -> dict[str, bool]:
    association, shift = comparison["association"], comparison["shift"]
    return {
        "excess interval below 0": association["ci_excess"][1] < 0 if targets["excess_interval_below_zero"] else True,
        f"soft distance shrinks >= {targets['soft_shrink_pct']:g}%":
            (association["soft_shrink_pct"] or 0.0) >= targets["soft_shrink_pct"],
        "no group shifted (c or d, Holm)": not shift["shifted"],
        f"neutral d moves <= {targets['neutral_moved_nats']:g} nats":
            shift["neutral_moved_max"] <= targets["neutral_moved_nats"],
        f"knowledge within {targets['knowledge_points']:g} points": knowledge["delta"] >= -targets["knowledge_points"],
        "no knowledge group below chance": not knowledge["below_chance"],
        f"general perplexity within {targets['general_perplexity_pct']:g}%":
            perplexity["change_pct"] <= targets["general_perplexity_pct"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--candidate", required=True, help="the recipe's name, as BENCHMARKS.md lists it")
    parser.add_argument("--seed", type=int, default=None, help="the run's seed, recorded in the ledger")
    parser.add_argument("--out", type=Path, default=Path("runs/research/association/judged"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--sample-frames", type=int, default=None, help="smoke check only: never written to the ledger")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    spec = yaml.safe_load(TARGETS.read_text(encoding="utf-8"))
    test = load_pairs(SPEC)  # the registry refuses a test split that differs from its frozen checksum
    if test.checksum != spec["checksum"]:
        raise SystemExit(f"{SPEC} has checksum {test.checksum}, targets.yaml froze {spec['checksum']}")
    final = args.run / "final"
    options = {"sample": args.sample_frames, "sample_unit": "frame"} if args.sample_frames else {}
    suffix = f"-sample{args.sample_frames}" if args.sample_frames else ""
    candidate = qb.score(str(final), SPEC, out=args.out / f"{args.candidate}-seed{args.seed}{suffix}", **options)
    fingerprint = candidate.summary["meta"]["model"]["fingerprint"]
    if not args.sample_frames and any(entry["fingerprint"] == fingerprint for entry in ledger()):
        raise SystemExit(f"{final}: this model was judged on {SPEC} before (ledger.jsonl); a test split is scored "
                         "once per candidate")
    base = qb.score(base_model(args.run), SPEC, out=args.out / f"base{suffix}", **options)
    comparison = qb.compare(base, candidate, out=args.out / f"{args.candidate}-seed{args.seed}{suffix}-compare")
    last = comparison.delta["comparisons"][-1]
    knowledge, perplexity = knowledge_guard(args.run, spec["targets"]), general_perplexity(args.run)
    checks = verdict(last, knowledge, perplexity, spec["targets"])
    entry = {"candidate": args.candidate, "seed": args.seed, "run": str(args.run), "fingerprint": fingerprint,
             "date": datetime.date.today().isoformat(),
             "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                      cwd=HERE).stdout.strip(),
             "association": last["association"], "shifted": last["shift"]["shifted"],
             "neutral_moved_max": last["shift"]["neutral_moved_max"], "knowledge": knowledge,
             "general_perplexity": perplexity, "checks": checks, "met": all(checks.values())}
    print(json.dumps(entry, indent=1))
    if not args.sample_frames:
        with LEDGER.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")


if __name__ == "__main__":
    main()
