"""Where a group's preference sits: in the identity phrase's own tokens or in the predicate (issue 32).

    python bench/phrase_terms.py --study runs/study/do-no-harm-explore [--benchmark contrary-test]
        [--section phrase-terms] [--threads 1]

WinoQueer's score counts every token the two sentences share (`suites.pairs.alignment`), so
d = s(sent_more) - s(sent_less) also holds the shared tokens inside the identity phrase:
" Frauen" after "lesbische" against after "heterosexuelle". That term is the same for every
stereotype of a group in a frame; only the rest (the predicate's tokens) can carry the
stereotype. For the base and each cell's final checkpoint this splits every pair's d at the
end of the identity phrase (found with queerbias-de's phrases, so queerbias-de's own sets and
queerbias-de-contrary) and prints, per identity group, the mean of each part, and over the
groups the mean of their absolute values. Scored as `queerbias score` does (the default
scoring configuration), one model at a time.
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from pathlib import Path

import pandas as pd
import torch
import yaml
from benchmarks_md import write_section
from do_no_harm import evaluated_checkpoints

from queerbias.models import load_model
from queerbias.pairs.queerbias_de import identity_phrases
from queerbias.scoring.scorer import make_scorer
from queerbias.suites.pairs.alignment import scored_positions

REPO = Path(__file__).resolve().parents[1]


def phrase_end(sent_more: str, sent_less: str, phrases: list[tuple[str, str]]) -> int | None:
    """The character where sent_more's identity phrase ends: the phrase whose counterfactual turns
    sent_more into sent_less (None when no known phrase does)."""
    for phrase, counterfactual in phrases:
        for a, b in ((phrase, counterfactual), (phrase[:1].upper() + phrase[1:], counterfactual[:1].upper()
                                                 + counterfactual[1:])):
            start = sent_more.find(a)
            if start >= 0 and sent_more[:start] + b + sent_more[start + len(a):] == sent_less:
                return start + len(a)
    return None


def split_preferences(scorer, pairs: list[tuple[str, str, int]]) -> list[tuple[float, float]]:
    """d of each (sent_more, sent_less, end) as (identity phrase's shared tokens, the rest): the scored
    positions of sent_more within its first `end` characters, and those after, every pair scored in
    one batched call. For a causal LM the shared tokens before the phrase add exactly 0 (both
    contexts are the same there); a masked LM sees the whole sentence at every position, so for it
    they count in the first part."""
    plans = []
    for sent_more, sent_less, end in pairs:
        first, second = scorer.encode(sent_more), scorer.encode(sent_less)
        pos1, pos2 = scored_positions(first.ids, second.ids, scorer.kind, scorer.config.scope, first.scorable,
                                      second.scorable)
        plans.append((first.ids, second.ids, pos1, pos2, len(scorer.encode(sent_more[:end]).ids)))
    scores = scorer.token_logprobs([(ids, p) for ids1, ids2, pos1, pos2, _ in plans
                                    for ids, positions in ((ids1, pos1), (ids2, pos2)) for p in positions])
    found = []
    for ids1, ids2, pos1, pos2, head in plans:
        parts = [0.0, 0.0]
        for p1, p2 in zip(pos1, pos2, strict=True):
            parts[p1 >= head] += scores[(ids1, p1)] - scores[(ids2, p2)]
        found.append((parts[0], parts[1]))
    return found


def group_parts(model: str, pairs: pd.DataFrame, ends: dict[str, int]) -> dict[str, tuple[float, float]]:
    """Per group: the mean phrase part and the mean rest of d under `model`."""
    scorer = make_scorer(load_model(model))
    rows = [row for row in pairs.itertuples() if row.pair_id in ends]
    split = split_preferences(scorer, [(row.sent_more, row.sent_less, ends[row.pair_id]) for row in rows])
    found: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for row, parts in zip(rows, split, strict=True):
        found[row.group].append(parts)
    return {group: (statistics.fmean(p for p, _ in parts), statistics.fmean(r for _, r in parts))
            for group, parts in sorted(found.items())}


def final_checkpoint(cell: Path) -> Path | None:
    """The cell's checkpoint of the highest step (the one a study judges)."""
    steps = evaluated_checkpoints(cell)
    return steps[-1][1] if steps else None


def base_model(cell: Path) -> str:
    """The model the cell trained (its study's model spec)."""
    return yaml.safe_load((cell / "study-cell.yaml").read_text())["model"]


def table(columns: dict[str, dict[str, tuple[float, float]]], benchmark: str) -> str:
    names = list(columns)
    groups = sorted({g for parts in columns.values() for g in parts})
    lines = [f"Mean d (nats) per identity group on `{benchmark}`, split at the end of the identity phrase: "
             "phrase = the phrase's own shared tokens (\" Frauen\" after \"lesbische\" / \"heterosexuelle\"), "
             "rest = the predicate's tokens; d > 0 prefers the stereotypical sentence.", "",
             "| group | " + " | ".join(f"{n}: phrase | {n}: rest" for n in names) + " |",
             "|:---|" + "---:|---:|" * len(names)]
    for group in groups:
        cells = [f"{columns[n][group][0]:+.2f} | {columns[n][group][1]:+.2f}" if group in columns[n] else "– | –"
                 for n in names]
        lines.append(f"| {group} | " + " | ".join(cells) + " |")
    means = [f"{statistics.fmean(abs(p) for p, _ in columns[n].values()):.2f} | "
             f"{statistics.fmean(abs(r) for _, r in columns[n].values()):.2f}" for n in names]
    lines.append("| **mean \\|·\\| over groups** | " + " | ".join(means) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", type=Path, default=REPO / "runs" / "study" / "do-no-harm-explore")
    parser.add_argument("--benchmark", default="contrary-test")
    parser.add_argument("--section", help="the BENCHMARKS.md section it writes (none: print only)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    cells = sorted(p for p in (args.study / "runs").glob("*/*/seed-*") if final_checkpoint(p))
    if not cells:
        raise SystemExit(f"{args.study}: no cell with a checkpoint")
    pairs = pd.read_csv(cells[0] / "base" / args.benchmark / "pairs.csv")
    phrases = identity_phrases()
    ends = {row.pair_id: end for row in pairs.itertuples()
            if (end := phrase_end(row.sent_more, row.sent_less, phrases)) is not None}
    columns = {"base": group_parts(base_model(cells[0]), pairs, ends)}
    for cell in cells:
        checkpoint = final_checkpoint(cell)
        columns[f"{cell.parent.name} ({checkpoint.name})"] = group_parts(str(checkpoint), pairs, ends)
    study = args.study.resolve()
    shown = study.relative_to(REPO) if study.is_relative_to(REPO) else study
    text = (f"`python bench/phrase_terms.py --study {shown} --benchmark {args.benchmark}`: {len(ends)} of "
            f"{len(pairs)} pairs split (the rest name no known phrase), torch {torch.__version__}, "
            f"{args.threads} thread(s).\n\n" + table(columns, args.benchmark))
    print(text)
    if args.section:
        write_section(args.section, text)


if __name__ == "__main__":
    main()
