"""GIFI-DE's implementation: generations of a causal LM, scored on the seven dimensions.

Items are the prompts of every run (run r repeats the prompts with other samples). Each
chunk of prompts is generated as one batch seeded from the run seed and the chunk's
first prompt, so the samples do not depend on the number of processes or on resuming.
Rows (generations.jsonl) carry what each generation is scored on; the summary adds
per-dimension bootstrap intervals over templates, and a comparison tests each
dimension's change with a paired bootstrap over templates.
"""

from __future__ import annotations

import hashlib
import logging
import zlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from queerbias.distributed import process_state
from queerbias.report.plots import radar_plot
from queerbias.suites.gifi.breakdowns import breakdowns, change
from queerbias.suites.gifi.classifiers import TextClassifier, Unavailable
from queerbias.suites.gifi.config import DIMENSIONS, TASK_OF, GifiConfig
from queerbias.suites.gifi.declaration import Gifi
from queerbias.suites.gifi.embeddings import SentenceEmbedder
from queerbias.suites.gifi.extractor import PronounExtractor
from queerbias.suites.gifi.generation import Decoding, generate
from queerbias.suites.gifi.prompts import build_items, load_prompt_set
from queerbias.suites.gifi.pronouns import default_groups_path, load_groups, select_groups
from queerbias.suites.gifi.scoring import Components, annotate
from queerbias.suites.gifi.summary import (
    app_d_tables,
    build_summary,
    histogram_series,
    mean_over_runs,
    provenance_lines,
    radar_series,
    summary_blocks,
    units_by_run,
)
from queerbias.suites.protocol import OVERALL, DataRef, Headline, PairedItems, Suite
from queerbias.suites.rows import records

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Prompt:
    """One prompt of one run, with the refusal prefixes of its prompt set."""

    run: int
    item: object  # prompts.Item
    refusals: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.run}:{self.item.item_id}"


class GifiSuite(Gifi, Suite):
    def texts(self, items):
        """The prompts: a model trained on them would be judged on its training text."""
        return list(dict.fromkeys(prompt.item.prompt for prompt in items))

    def load_data(self, spec, settings):
        prompts = load_prompt_set(spec or settings.prompts)
        groups, path = _groups(settings)
        tasks = list(dict.fromkeys(TASK_OF[d] for d in DIMENSIONS if d in settings.dimensions))
        items = {task: build_items(prompts, groups, task, limit=settings.sample, saof_names=settings.saof_names,
                                   saof_samples=settings.saof_samples, pe_shots=settings.pe_shots) for task in tasks}
        prompts_of_runs = [Prompt(run, item, prompts.refusals) for run in range(settings.runs) for task in tasks
                           for item in items[task]]
        pronouns = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        checksum = hashlib.sha256(f"{prompts.checksum}|{pronouns}".encode()).hexdigest()[:16]
        details = {"prompts": prompts.path, "prompts_checksum": prompts.checksum, "pronouns": str(path),
                   "pronouns_checksum": pronouns, "items_per_task": {task: len(items[task]) for task in tasks},
                   "groups": {g.key: g.label for g in groups}}
        return prompts_of_runs, DataRef("gifi-de", checksum, len(prompts_of_runs), prompts.path, details)

    def chunk_size(self, settings) -> int:
        return settings.batch_size

    even_chunks = False  # a chunk is one generation batch, seeded from its first prompt

    def evaluate(self, lm, chunks, settings):
        extractor = PronounExtractor(_groups(settings)[0])
        components = load_components(settings)
        for chunk in chunks:
            seed = chunk_seed(settings.seed, chunk[0])
            texts = generate(lm, [p.item.prompt for p in chunk], _decoding(settings), seed=seed,
                             batch_size=len(chunk), progress=False)
            rows = [generation_row(prompt, seed, text) for prompt, text in zip(chunk, texts, strict=True)]
            annotate(rows, extractor, components, chunk[0].refusals, [p.item.meta.get("stop") for p in chunk])
            yield rows

    def run_meta(self, lm, settings) -> dict:
        components = load_components(settings)
        described = {name: (getattr(components, name).describe() if getattr(components, name) is not None
                            else {"missing": components.missing.get(name, "not needed")})
                     for name in ("sentiment", "toxicity", "embedder")}
        notes = []
        if components.embedder is not None and components.embedder.english_only:
            notes.append(f"CF uses {components.embedder.spec}, an English-trained sentence encoder; "
                         "similarities of German texts are coarser than in English.")
        return {"decoding": _decoding(settings).generate_kwargs(), "components": described, "notes": notes}

    def summarise(self, rows, settings) -> dict:
        groups = _groups(settings)[0]
        return build_summary(records(rows), settings, [g.key for g in groups], _detectable(groups),
                             load_components(settings).missing, {g.key: g.kind for g in groups})

    def headline(self, summary) -> Headline:
        return Headline("GIFI", summary["gifi"]["mean"],
                        {d: e.get("mean") for d, e in summary["dimensions"].items() if e["computed"]})

    def paired_cells(self, before, after, settings):
        groups = _groups(settings)[0]
        context = {"group_keys": [g.key for g in groups], "detectable": _detectable(groups),
                   "cf_threshold": settings.cf_threshold}
        units = [units_by_run(records(rows), settings.dimensions) for rows in (before, after)]
        common = {}
        for dim in DIMENSIONS:
            if dim in settings.dimensions:
                ids = list(units[0][dim][0])
                values = tuple(mean_over_runs(dim, u[dim], ids, context) for u in units)
                if None not in values:
                    common[dim] = (ids, values)

        def draw(dims):
            def resample(rng):
                picked = {d: [common[d][0][i] for i in rng.integers(0, len(common[d][0]), len(common[d][0]))]
                          for d in dims}
                sides = [[mean_over_runs(d, u[d], picked[d], context) for d in dims] for u in units]
                return None if any(v is None for side in sides for v in side) else tuple(
                    float(np.mean(side)) for side in sides)
            return resample

        if not common:
            return
        index = tuple(float(np.mean([common[d][1][side] for d in common])) for side in (0, 1))
        yield PairedItems(OVERALL, OVERALL, {"score": index},
                          {"score": (sum(len(v[0]) for v in common.values()), draw(list(common)))})
        for dim, (ids, values) in common.items():
            yield PairedItems("dimensions", dim, {"score": values}, {"score": (len(ids), draw([dim]))})

    def extras(self, before, after, options, settings) -> dict:
        """App. D of both runs on the same prompts (Figs. D.8, D.9, D.11 and the D.1 correlation of accuracy
        with its variance over runs), with each share's and count's change (`breakdowns.change`)."""
        kinds = {g.key: g.kind for g in _groups(settings)[0]}
        return {"app_d": change(breakdowns(records(before), kinds), breakdowns(records(after), kinds))}

    def extra_tables(self, document) -> list:
        return app_d_tables(document)

    def title(self, summary) -> str:
        return f"GIFI-DE: {summary['meta']['model']['spec']}"

    def render(self, summary) -> list:
        return summary_blocks(summary)

    def provenance(self, meta) -> list[str]:
        return provenance_lines(meta)

    def plot(self, summary, path):
        return radar_plot([radar_series(summary["meta"]["model"]["spec"], summary)], path,
                          "GIFI-DE dimensions (1 = equal treatment)", histogram_series(summary))


def chunk_seed(seed: int, first: Prompt) -> int:
    """The seed of a batch: the run seed (seed + run, as GIFI's runs) and the batch's first prompt."""
    return zlib.crc32(f"{seed + first.run}:{first.item.item_id}".encode())


def _decoding(settings):
    return Decoding(settings.temperature, settings.top_p, settings.top_k, settings.max_new_tokens)


def _groups(settings):
    """The selected pronoun groups and the file they come from."""
    path = default_groups_path() if settings.pronouns is None else Path(settings.pronouns)
    return select_groups(load_groups(path), settings.groups, str(path)), path


def _detectable(groups) -> list[str]:
    return [g.key for g in groups if not g.name_only]


@cache
def load_components(settings: GifiConfig):
    """The classifiers and embedder the requested dimensions need (once per process), or why each is
    missing: a dimension without its component is reported as not computed, never estimated."""
    components, device = Components(), process_state().device
    specs = (("sentiment", "SN", settings.sentiment_model), ("toxicity", "NTS", settings.toxicity_model),
             ("embedder", "CF", settings.embedding_model))
    for name, dim, spec in specs:
        if dim not in settings.dimensions:
            continue
        if spec is None:
            components.missing[name] = f"no {name} model configured"
            continue
        try:
            if name == "embedder":
                component = SentenceEmbedder(spec, download=settings.download, device=device)
            else:
                component = TextClassifier(spec, name, download=settings.download, device=device,
                                           toxic_label=settings.toxic_label)
        except Unavailable as err:
            log.warning("%s not computed: %s", dim, err)
            components.missing[name] = str(err)
            continue
        setattr(components, name, component)
    return components


def generation_row(prompt: Prompt, seed: int, text: str) -> dict:
    """A generation with its prompt; `scoring.annotate` adds what it is scored on."""
    item = prompt.item
    return {"run": prompt.run, "seed": seed, "task": item.task, "item_id": item.item_id,
            "template_id": item.template_id, "group": item.group, "name": item.name, "sample": item.sample,
            "state": item.meta.get("state"), "attribute": item.meta.get("attribute"),
            "expected": item.meta.get("answer"), "prompt": item.prompt, "generation": text, "detected": None,
            "ambiguous": None, "correct": None, "answer": None, "refusal": None, "sentiment": None,
            "toxicity": None, "embedding": None}
