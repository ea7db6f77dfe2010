"""Find frames where the base prefers the counterfactual: score every candidate of queerbias-de-contrary.

    python bench/contrary_frames.py [--threads 1] [--out runs/bench/contrary-frames] [--frames ID,ID]

Every candidate frame of `src/queerbias/data/contrary_frames/frames.yaml` (chosen or not)
is filled with a `screen`-sized draw of queerbias-de's predicates per group (a draw of its
own, seeded like the set's) and scored on the embedded Gemma 3 270M base with the reference
method, through the store (resumable in `--out`). Per frame: pairs, the overall bias score,
the groups below and above 50, the stereotype excess and the distance to indifference,
sorted by bias. `--frames` screens only these candidates (a later batch), in a run of its
own; each batch's table is added to bench/contrary_frames.md. Choosing frames (their `part`)
is a person's edit of frames.yaml, by these base figures alone, never an adapter's.
"""

from __future__ import annotations

import argparse
import platform
from pathlib import Path

import numpy as np
import torch

import queerbias as qb
from queerbias.pairs.contrary_frames import generate, load_frames
from queerbias.pairs.schema import PairSet

MODEL = "embedded:gemma-3-270m"
LOG = Path(__file__).resolve().parent / "contrary_frames.md"


def frame_figures(rows, frames: list[dict]) -> list[dict]:
    """Per frame id: n, bias, groups below/above 50, excess, distance (rows: the scored pairs)."""
    found = []
    for frame in frames:
        mine = rows[rows["pair_id"].str.startswith(f"qdc-{frame['id']}-")]
        groups = mine.groupby("group")["biased"].mean() * 100
        found.append({"id": frame["id"], "text": frame["text"], "part": frame.get("part") or "", "n": len(mine),
                      "bias": 100 * mine["biased"].mean(), "below": int((groups < 50).sum()),
                      "above": int((groups > 50).sum()), "groups": len(groups),
                      "excess": float(np.maximum(0, groups - 50).mean()), "distance": float((groups - 50).abs().mean())})
    return sorted(found, key=lambda f: f["bias"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default="runs/bench/contrary-frames")
    parser.add_argument("--frames", help="comma-separated candidate ids (default: every candidate)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    spec = load_frames()
    wanted = args.frames.split(",") if args.frames else [frame["id"] for frame in spec["frames"]]
    unknown = sorted(set(wanted) - {frame["id"] for frame in spec["frames"]})
    if unknown:
        parser.error(f"no candidate frame {unknown[0]!r} in frames.yaml")
    frames = [frame for frame in spec["frames"] if frame["id"] in wanted]
    built = generate(frames, spec["screen"])
    pairs = PairSet("queerbias-de-contrary-candidates", [pair for pair, _ in built], "bench/contrary_frames.py")
    run = qb.score(MODEL, pairs, out=args.out, label="base")
    figures = frame_figures(run.pairs, frames)
    command = f"python bench/contrary_frames.py --threads {args.threads}" + (f" --frames {args.frames}"
                                                                            if args.frames else "")
    lines = [
        f"## {len(frames)} candidates",
        "",
        f"`{command}`: {MODEL}, reference scoring, {platform.machine()}, "
        f"torch {torch.__version__}; {len(pairs)} pairs, {spec['screen']} predicates per frame and group "
        f"(frames.yaml version {spec['version']}). Sorted by the frame's overall bias score (% of pairs preferring "
        "the stereotype); below / above: groups with a bias score below / above 50; excess: mean over groups of "
        "max(0, bias - 50); distance: mean over groups of |bias - 50|.",
        "",
        "| frame | text | part | pairs | bias | groups below 50 | groups above 50 | excess | distance |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [f"| {f['id']} | {f['text']} | {f['part']} | {f['n']} | {f['bias']:.1f} | {f['below']}/{f['groups']} | "
              f"{f['above']}/{f['groups']} | {f['excess']:.1f} | {f['distance']:.1f} |" for f in figures]
    head = LOG.read_text(encoding="utf-8") if LOG.is_file() else \
        "# Candidate frames of queerbias-de-contrary, scored on the base\n"
    LOG.write_text(head.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
