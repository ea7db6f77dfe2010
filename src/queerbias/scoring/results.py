"""The scorer's output contract: pairs.csv, summary.md and, last, summary.json.

Other tools (compare, the trainer, users' scripts) read these files. Every file is
written to a temporary name and renamed, and summary.json comes last, so a
directory with a summary.json always holds a finished run.
"""

from __future__ import annotations

import csv
import io
import json
import platform
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from queerbias.fileio import atomic_write
from queerbias.pairs.taxonomy import table_order
from queerbias.scoring.aggregate import distance_to_indifference, summarise_groups
from queerbias.scoring.pair_scores import PairScore

PAIR_COLUMNS = ["pair_id", "group", "counterfactual_group", "category", "direction",
                "sent_more", "sent_less", "score_more", "score_less", "biased", "neutral", "soft"]
_VERSIONED = ("torch", "transformers", "accelerate", "peft", "numpy", "scipy", "tokenizers")


def package_versions() -> dict:
    versions = {"python": platform.python_version()}
    for name in ("queerbias", *_VERSIONED):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def build_summary(scores: Sequence[PairScore], meta: dict) -> dict:
    overall, groups = summarise_groups([s.pair.group for s in scores],
                                       [s.biased for s in scores],
                                       [s.neutral for s in scores],
                                       [s.soft for s in scores])
    ordered = {group: groups[group] for group in table_order(groups)}
    return {"overall": overall, "groups": ordered, "distance": distance_to_indifference(ordered), "meta": meta}


def pairs_csv(scores: Sequence[PairScore]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(PAIR_COLUMNS)
    for s in scores:
        p = s.pair
        writer.writerow([p.pair_id, p.group, p.counterfactual_group, p.category, p.direction,
                         p.sent_more, p.sent_less, repr(s.score_more), repr(s.score_less),
                         s.biased, s.neutral, repr(s.soft)])
    return buffer.getvalue()


def summary_markdown(summary: dict) -> str:
    meta = summary["meta"]
    lines = [
        f"# Bias scores: {meta['model']['spec']} on {meta['data']['name']}",
        "",
        "Bias score: % of pairs where the stereotypical sentence is more likely (50 = no "
        "preference; ties count as not biased and stay in the denominator). Soft score: "
        "mean of 100·s_less/(s_more+s_less); above 50 leans stereotypical.",
        "",
        "| Group | n | neutral | bias score ± se | soft score ± se |",
        "|---|---:|---:|---:|---:|",
    ]
    rows = [*summary["groups"].items(), ("**Overall**", summary["overall"])]
    for group, fig in rows:
        lines.append(f"| {group} | {fig['n']} | {fig['n_neutral']} | "
                     f"{_pm(fig['bias_score'], fig['bias_se'])} | "
                     f"{_pm(fig['soft_score'], fig['soft_se'])} |")
    scoring = meta["scoring"]
    distance = summary.get("distance")
    if distance and distance["bias"] is not None:
        lines += ["", f"Distance to indifference (mean over the {distance['n_groups']} groups of |score - 50|): "
                      f"bias {distance['bias']:.2f}, soft {distance['soft']:.2f} (0 = every group at 50)."]
    lines += [
        "",
        f"- model fingerprint: `{meta['model']['fingerprint']}` ({meta['model']['kind']}, "
        f"{meta['model'].get('dtype')})",
        f"- data checksum: `{meta['data']['checksum']}` ({meta['data']['n_pairs']} pairs)",
        f"- scoring: {'reference method' if not scoring['deviations'] else scoring['deviations']}"
        f" (scoring id `{meta['scoring_id']}`)",
        f"- time: {meta['timings']['score_s']:.1f} s scoring "
        f"({meta['timings']['pairs_per_s']:.1f} pairs/s)",
    ]
    return "\n".join(lines) + "\n"


def _pm(value, se) -> str:
    if value is None:
        return "–"
    return f"{value:.2f}" if se is None else f"{value:.2f} ± {se:.2f}"


def write_outputs(out_dir: Path, scores: Sequence[PairScore], meta: dict) -> dict:
    summary = build_summary(scores, meta)
    atomic_write(out_dir / "pairs.csv", pairs_csv(scores))
    atomic_write(out_dir / "summary.md", summary_markdown(summary))
    atomic_write(out_dir / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return summary
