"""`run_gifi`: generate, score and write one model's GIFI-DE results to a directory.

Output (the scorer's contract, adapted): generations.jsonl (every prompt and
continuation with what it was scored on), dimensions.csv (per run), groups.csv
(per-group figures per run), summary.md, radar.png and, last, summary.json, so a
directory with summary.json holds a finished run.
"""

from __future__ import annotations

import json
import logging
import time
from datetime import datetime, timezone
from pathlib import Path

from queerbias.errors import QueerbiasError
from queerbias.fileio import atomic_write
from queerbias.scoring.results import package_versions
from queerbias.suites.gifi.classifiers import TextClassifier, Unavailable
from queerbias.suites.gifi.config import GifiConfig
from queerbias.suites.gifi.dimensions import DIMENSIONS
from queerbias.suites.gifi.embeddings import SentenceEmbedder
from queerbias.suites.gifi.extractor import PronounExtractor
from queerbias.suites.gifi.generation import Decoding, generate
from queerbias.suites.gifi.prompts import build_items, load_prompt_set
from queerbias.suites.gifi.pronouns import (
    default_groups_path,
    load_groups,
    select_groups,
)
from queerbias.suites.gifi.report import (
    build_summary,
    radar_plot,
    summary_markdown,
    to_rows_csv,
)
from queerbias.suites.gifi.scoring import Components, score_run

log = logging.getLogger(__name__)

TASK_OF = {"GDR": "gdr", "SN": "counterfactual", "NTS": "counterfactual", "CF": "counterfactual",
           "SA": "saof", "OF": "saof", "PE": "pe"}


def run_gifi(lm_or_spec, out_dir, *, config: GifiConfig | None = None, overwrite: bool = False,
             progress: bool = True, extra_meta: dict | None = None, **load_options) -> dict:
    """Evaluate a causal LM (LoadedModel or spec) on GIFI-DE; returns the summary dict."""
    from queerbias.models import LoadedModel, load_model

    config = config or GifiConfig()
    out = Path(out_dir)
    if (out / "summary.json").exists() and not overwrite:
        raise QueerbiasError(f"{out} already holds a finished GIFI run; pass overwrite to replace it")
    out.mkdir(parents=True, exist_ok=True)
    groups = select_groups(load_groups(config.pronouns), config.groups, config.pronouns or "pronouns.yaml")
    prompt_set = load_prompt_set(config.prompts)
    tasks = list(dict.fromkeys(TASK_OF[d] for d in DIMENSIONS if d in config.dimensions))
    items = {task: build_items(prompt_set, groups, task, limit=config.limit, saof_names=config.saof_names,
                               saof_samples=config.saof_samples, pe_shots=config.pe_shots) for task in tasks}
    lm = lm_or_spec if isinstance(lm_or_spec, LoadedModel) else load_model(lm_or_spec, **load_options)
    extractor = PronounExtractor(groups)
    components = load_components(config, lm.device)
    decoding = Decoding(config.temperature, config.top_p, config.top_k, config.max_new_tokens)
    group_keys = [g.key for g in groups]

    timings = {"generate_s": 0.0, "score_s": 0.0}
    rows, runs = [], []
    for run in range(config.runs):
        seed = config.seed + run
        outputs, run_rows = {}, {}
        for task in tasks:
            start = time.perf_counter()
            outputs[task] = generate(lm, [i.prompt for i in items[task]], decoding, seed=seed,
                                     batch_size=config.batch_size, progress=progress,
                                     desc=f"GIFI run {run + 1}/{config.runs}: {task}")
            timings["generate_s"] += time.perf_counter() - start
            run_rows[task] = [_row(run, seed, item, text) for item, text in zip(items[task], outputs[task], strict=True)]
        start = time.perf_counter()
        scores = score_run(items, outputs, run_rows, group_keys, extractor, components,
                           config.dimensions, config.cf_threshold, prompt_set.refusals)
        timings["score_s"] += time.perf_counter() - start
        runs.append({"run": run, "seed": seed, "values": scores.values, "reasons": scores.reasons,
                     "groups": scores.groups})
        rows.extend(row for task in tasks for row in run_rows[task])

    meta = {
        "model": lm.describe(),
        "data": {"name": "gifi-de", "pronouns": config.pronouns or str(default_groups_path()),
                 "prompts": prompt_set.path, "checksum": prompt_set.checksum,
                 "n_items": {task: len(items[task]) for task in tasks},
                 "groups": {g.key: g.label for g in groups}},
        "config": config.to_dict(),
        "decoding": decoding.generate_kwargs(),
        "components": components_meta(components),
        "notes": notes(components),
        "versions": package_versions(),
        "timings": {key: round(value, 2) for key, value in timings.items()},
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        **(extra_meta or {}),
    }
    summary = build_summary(runs, config.dimensions, group_keys, meta)
    atomic_write(out / "generations.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    dims_csv, groups_csv = to_rows_csv(runs)
    atomic_write(out / "dimensions.csv", dims_csv)
    atomic_write(out / "groups.csv", groups_csv)
    atomic_write(out / "summary.md", summary_markdown(summary))
    if any(entry["computed"] for entry in summary["dimensions"].values()):
        radar_plot([(lm.spec, summary)], out / "radar.png")
    atomic_write(out / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return summary


def load_components(config: GifiConfig, device) -> Components:
    """The classifiers and embedder the requested dimensions need; reasons for those missing."""
    components, wanted = Components(), set(config.dimensions)
    specs = (("sentiment", "SN", config.sentiment_model), ("toxicity", "NTS", config.toxicity_model),
             ("embedder", "CF", config.embedding_model))
    for name, dim, spec in specs:
        if dim not in wanted:
            continue
        if spec is None:
            components.missing[name] = f"no {name} model configured"
            continue
        try:
            if name == "embedder":
                component = SentenceEmbedder(spec, download=config.download, device=device)
            else:
                component = TextClassifier(spec, name, download=config.download, device=device,
                                           toxic_label=config.toxic_label)
        except Unavailable as err:
            log.warning("%s not computed: %s", dim, err)
            components.missing[name] = str(err)
            continue
        setattr(components, name, component)
    return components


def components_meta(components: Components) -> dict:
    return {name: (getattr(components, name).describe() if getattr(components, name) is not None
                   else {"missing": components.missing.get(name, "not needed")})
            for name in ("sentiment", "toxicity", "embedder")}


def notes(components: Components) -> list[str]:
    found = []
    if components.embedder is not None and components.embedder.english_only:
        found.append(f"CF uses {components.embedder.spec}, an English-trained sentence encoder; "
                     "similarities of German texts are coarser than in English.")
    return found


def _row(run: int, seed: int, item, text: str) -> dict:
    return {"run": run, "seed": seed, "task": item.task, "item_id": item.item_id,
            "template_id": item.template_id, "group": item.group, "name": item.name,
            "sample": item.sample, **item.meta, "prompt": item.prompt, "generation": text}
