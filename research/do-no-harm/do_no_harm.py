"""Issue 32's targets, read on the test frames of the do-no-harm study: BENCHMARKS.md's target table.

    python bench/do_no_harm.py [--study runs/study/do-no-harm-gemma] [--benchmark contrary-test]
    python bench/do_no_harm.py --study runs/study/do-no-harm-demo --section do-no-harm-demo-targets
    python bench/do_no_harm.py --study runs/study/do-no-harm-allgroups --section do-no-harm-allgroups-targets \
        --checkpoints do-no-harm-allgroups-checkpoints

For every run of the study (`configs/study-do-no-harm-gemma.yaml`, run by
`python bench/mitigation.py --study do-no-harm`), from its cells' own compare reports of the
base against the final checkpoint on the benchmark (the test frames, which no run trained or
was selected on), per seed and as the mean over seeds:
- the stereotype excess before -> after (target: not raised);
- the groups moved above 60% towards the stereotype (bias score at most 60 before, above 60
  after), with before -> after and how likely so many of its pairs would prefer the stereotype
  if the model were indifferent to the group (target: none, in any seed);
- the soft distance's change in % of before (target: -50% or lower);
- the binary distance against its coin-flip floor.
The run the study's judge chose is marked; the judge reads the validation frames, never these.
With `--checkpoints SECTION`, also every evaluated checkpoint of every cell, from the
checkpoints' own summaries against the base's: the excess, the soft distance's change and the
groups moved above 60 on the benchmark, and the groups that crossed 50 on the validation frames.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from pathlib import Path

from benchmarks_md import write_section
from scipy.stats import binomtest

from queerbias.study.aggregate import method_columns, method_rows, read_state
from queerbias.study.judging import verdicts
from queerbias.suites.pairs.indifference import HARM_HIGH

REPO = Path(__file__).resolve().parents[1]


def by_chance(percent: float, n: int) -> str:
    """k/n pairs preferring the stereotype and the chance of at least k if the model were
    indifferent (each pair a fair coin; exact one-sided binomial test): with 21 pairs a group, a
    group pulled to indifference reads above 60 one time in five."""
    k = round(percent * n / 100)
    return f"{k}/{n}, p {binomtest(k, n, 0.5, alternative='greater').pvalue:.3f} if indifferent"


def pushed(direction: dict) -> list[str]:
    """Groups moved above HARM_HIGH towards the stereotype, with before -> after and `by_chance`."""
    return [f"{group} ({entry['bias_before']:.1f} → {entry['bias_after']:.1f}; "
            f"{by_chance(entry['bias_after'], entry['n'])})"
            for group, entry in direction["groups"].items()
            if entry["bias_before"] <= HARM_HIGH < entry["bias_after"]]


def run_rows(state, benchmark: str) -> list[dict]:
    rows = []
    for run, model in state.pairs():
        records, missing = state.seeds_of(run, model, benchmark)
        finished = [r for r in records if r.status == "finished" and benchmark in r.deltas]
        lasts = [r.deltas[benchmark]["comparisons"][-1] for r in finished]
        if not lasts:
            continue
        seeds = [r.cell.seed for r in finished]
        excess = [(c["direction"]["excess_before"], c["direction"]["excess_after"]) for c in lasts]
        soft = [100.0 * (c["distance"]["soft_after"] / c["distance"]["soft_before"] - 1) for c in lasts]
        rows.append({
            "run": run, "model": model, "seeds": seeds, "missing": missing,
            "excess": (statistics.fmean(b for b, _ in excess), statistics.fmean(a for _, a in excess)),
            "excess_per_seed": [a - b for b, a in excess],
            "pushed": {seed: pushed(c["direction"]) for seed, c in zip(seeds, lasts, strict=True)},
            "soft": statistics.fmean(soft), "soft_per_seed": soft,
            "distance": (statistics.fmean(c["distance"]["bias_before"] for c in lasts),
                         statistics.fmean(c["distance"]["bias_after"] for c in lasts)),
            "floor": lasts[0]["distance"].get("floor"),
        })
    return rows


def _summary(folder: Path, benchmark: str) -> dict | None:
    path = folder / benchmark / "summary.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def moved(before: dict, after: dict, line: float) -> list[str]:
    """Groups at or below `line` before and above it after, with before -> after."""
    groups = [(g, before["groups"][g]["bias_score"], v["bias_score"]) for g, v in after["groups"].items()]
    return [f"{g} {b:.0f}→{a:.0f}" for g, b, a in groups if b is not None and a is not None and b <= line < a]


def study_cells(study: Path) -> list[Path]:
    """The study's cell folders (runs/MODEL/RUN/seed-S), by run and seed."""
    return sorted(Path(study).glob("runs/*/*/seed-*"), key=lambda p: (p.parent.name, p.name))


def evaluated_checkpoints(cell: Path) -> list[tuple[int, Path]]:
    """The cell's checkpoint folders with their steps, in step order (the last is the one a study judges)."""
    return sorted((int(step), path) for path in cell.glob("checkpoint-*")
                  if (step := path.name.partition("-")[2]).isdigit())


def checkpoint_table(cells: list[Path], benchmark: str, validation: str,
                     scored: Callable[[Path], Path] = lambda folder: folder) -> str:
    """Every evaluated checkpoint of every cell (folders RUN/seed-S with base/ and checkpoint-N/);
    `scored(folder)`: where the summaries on `benchmark` of that base or checkpoint folder lie
    (default: in it, as a run writes its own benchmarks)."""
    lines = [f"| run | seed | step | {benchmark}: excess | {benchmark}: soft | {benchmark}: moved above 60 | "
             f"{validation}: crossed 50 |", "|:---|---:|---:|---:|---:|:---|:---|"]
    for cell in cells:
        base, base_check = _summary(scored(cell / "base"), benchmark), _summary(cell / "base", validation)
        for step, folder in evaluated_checkpoints(cell):
            after, check = _summary(scored(folder), benchmark), _summary(folder, validation)
            if base is None or after is None:
                continue
            soft = 100.0 * (after["distance"]["soft"] / base["distance"]["soft"] - 1)
            crossed = ", ".join(moved(base_check, check, 50.0)) if base_check and check else "–"
            lines.append(f"| {cell.parent.name} | {cell.name.partition('-')[2]} | {step} | "
                         f"{after['direction']['stereotype_excess']:.2f} | {soft:+.1f}% | "
                         f"{', '.join(moved(base, after, HARM_HIGH)) or 'none'} | {crossed or 'none'} |")
    return "\n".join(lines)


def table(rows: list[dict], chosen: set[tuple[str, str]], benchmark: str) -> str:
    lines = [f"Issue 32's targets on `{benchmark}` (the test frames: no run trained or was selected on them), "
             "base → final checkpoint, mean over the seeds listed; every seed's own value in brackets.",
             "",
             "| run | seeds | stereotype excess (target: not raised) | groups moved above 60 towards the stereotype "
             "(target: none) | soft distance (target: ≤ −50%) | binary distance (coin-flip floor) | all three met |",
             "|:---|---:|---:|:---|---:|---:|:---|"]
    for row in rows:
        excess_ok = all(change <= 0 for change in row["excess_per_seed"])
        pushed_ok = not any(row["pushed"].values())
        soft_ok = all(change <= -50.0 for change in row["soft_per_seed"])
        named = "; ".join(f"seed {seed}: {', '.join(groups)}" for seed, groups in row["pushed"].items() if groups)
        mark = " (chosen)" if (row["run"], row["model"]) in chosen else ""
        lines.append(
            f"| {row['run']}{mark} | {', '.join(map(str, row['seeds']))} | {row['excess'][0]:.2f} → "
            f"{row['excess'][1]:.2f} ({', '.join(f'{c:+.2f}' for c in row['excess_per_seed'])}) | {named or 'none'} | "
            f"{row['soft']:+.1f}% ({', '.join(f'{c:+.0f}%' for c in row['soft_per_seed'])}) | "
            f"{row['distance'][0]:.2f} → {row['distance'][1]:.2f} ({row['floor']:.2f}) | "
            f"{'yes' if excess_ok and pushed_ok and soft_ok else 'no'} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", default=str(REPO / "runs" / "study" / "do-no-harm-gemma"))
    parser.add_argument("--benchmark", default="contrary-test")
    parser.add_argument("--section", default="do-no-harm-targets", help="the BENCHMARKS.md section it writes")
    parser.add_argument("--checkpoints", help="also write every checkpoint's figures into this section")
    parser.add_argument("--validation", default="contrary", help="the benchmark read for crossings at each checkpoint")
    args = parser.parse_args()
    state = read_state(Path(args.study))
    columns = method_columns(state)
    found = verdicts(method_rows(state, columns), columns, state.study.judge)
    chosen = {key for key, verdict in found.items() if verdict.chosen}
    text = table(run_rows(state, args.benchmark), chosen, args.benchmark)
    print(text)
    write_section(args.section, text)
    if args.checkpoints:
        found = checkpoint_table(study_cells(args.study), args.benchmark, args.validation)
        print(found)
        write_section(args.checkpoints, found)


if __name__ == "__main__":
    main()
