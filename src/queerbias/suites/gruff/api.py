"""`run_gruff`: generate, score and write one GRUFF run (items.csv, summary.md, plot, summary.json).

The output contract mirrors the pair scorer's: summary.json is written last and
atomically, so a directory with one holds a finished run; its meta records the model
fingerprint, the template checksum, the generation and scoring settings and the
package versions, and `run_key` ties them together so a finished run is reused, not
silently replaced.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from queerbias.errors import QueerbiasError
from queerbias.fileio import atomic_write
from queerbias.models.loading import LoadedModel, load_model
from queerbias.scoring.results import package_versions
from queerbias.scoring.scorer import make_scorer
from queerbias.suites.gruff import report
from queerbias.suites.gruff.forms import PRONOUN_SETS
from queerbias.suites.gruff.generation import (
    SETTINGS,
    GenerationConfig,
    Instance,
    generate,
)
from queerbias.suites.gruff.metrics import summarise
from queerbias.suites.gruff.plots import accuracy_plot
from queerbias.suites.gruff.scoring import answers, score_options, scoring_config
from queerbias.suites.gruff.templates import TemplateSet, load_templates

log = logging.getLogger(__name__)

ITEM_COLUMNS = ["replicate", "item_id", "setting", "n_distractors", "occupation", "participant", "case",
                "system", "target", "distractor_system", "distractor", "text",
                *(f"score_{p}" for p in PRONOUN_SETS), "answer", "correct", "distractor_error", "tie"]
METHOD = ("forced choice among the four pronouns of the gap; causal: mean token log-probability of the "
          "whole text, masked: mean within_word_l2r pseudo-log-likelihood")


def run_gruff(
    lm_or_spec: str | LoadedModel,
    templates_dir: str | Path | TemplateSet | None,
    out_dir: str | Path,
    *,
    n: int | None = None,
    seed: int = 0,
    replicates: int = 1,
    settings: Sequence[str] = SETTINGS,
    pairing: str = "default",
    bos: str = "auto",
    batch_size: int | str = "auto",
    overwrite: bool = False,
    progress: bool = True,
    extra_meta: dict | None = None,
    **load_options,
) -> dict:
    """Score a model on GRUFF into `out_dir` and return the summary.

    templates_dir: folder with task.tsv and context.tsv, None to download them, or a
    loaded TemplateSet. n: items per setting and replicate (None: the paper's
    balanced set, 2,880 per context setting). extra_meta (e.g. step, perplexity) is
    merged into the meta, as for score runs. A model in training mode is scored in
    eval mode and put back.
    """
    started = time.perf_counter()
    templates = templates_dir if isinstance(templates_dir, TemplateSet) else load_templates(templates_dir)
    config = GenerationConfig(tuple(settings), pairing, n, seed, replicates)
    lm = lm_or_spec if isinstance(lm_or_spec, LoadedModel) else load_model(lm_or_spec, **load_options)
    scoring = scoring_config(lm, bos)
    out_dir = Path(out_dir)
    run_key = _run_key(lm.fingerprint, templates.checksum, json.dumps(config.to_dict(), sort_keys=True),
                       scoring.scoring_id)
    previous = _previous(out_dir / "summary.json", run_key, overwrite)
    if previous is not None:
        log.info("%s already holds this finished run; nothing to do", out_dir)
        return previous
    out_dir.mkdir(parents=True, exist_ok=True)

    items = generate(templates, config)
    loaded = time.perf_counter()
    was_training = lm.model.training
    lm.model.eval()
    try:
        scores = score_options(make_scorer(lm, scoring, batch_size), items, progress)
    finally:
        lm.model.train(was_training)
    scored = time.perf_counter()

    frame = items_frame(items, scores)
    summary = summarise(frame)
    summary["meta"] = {
        "suite": "gruff",
        "model": lm.describe(),
        "templates": templates.describe(),
        "generation": config.to_dict(),
        "scoring": {**scoring.to_dict(), "method": METHOD},
        "scoring_id": scoring.scoring_id,
        "run_key": run_key,
        "n_items": len(items),
        "versions": package_versions(),
        "timings": {"prepare_s": round(loaded - started, 3), "score_s": round(scored - loaded, 3),
                    "items_per_s": round(len(items) / max(scored - loaded, 1e-9), 2)},
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        **(extra_meta or {}),
    }
    atomic_write(out_dir / "items.csv", frame.to_csv(index=False, lineterminator="\n"))
    atomic_write(out_dir / "summary.md", report.summary_markdown(summary))
    accuracy_plot([(f"GRUFF accuracy: {lm.spec}", [(lm.spec, summary["settings"])])], out_dir / "accuracy.png")
    atomic_write(out_dir / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return summary


INSTANCE_COLUMNS = [*ITEM_COLUMNS[:ITEM_COLUMNS.index("text")], *(f"text_{p}" for p in PRONOUN_SETS)]


def instances_csv(items: Sequence[Instance]) -> str:
    """The instances with every option text, for inspection or other tools (`gruff generate`)."""
    rows = [[item.replicate, item.item_id, item.setting, item.n_distractors, item.occupation, item.participant,
             item.case, item.system, item.target, item.distractor_system, item.distractor, *item.texts()]
            for item in items]
    frame = pd.DataFrame(rows, columns=INSTANCE_COLUMNS).astype({"n_distractors": "Int64"})
    return frame.to_csv(index=False, lineterminator="\n")


def items_frame(items: Sequence[Instance], scores: np.ndarray) -> pd.DataFrame:
    """One row per instance: what it is, its gold text, the options' scores and the answer."""
    chosen, tie = answers(scores)
    rows = []
    for item, row_scores, pick, tied in zip(items, scores, chosen, tie, strict=True):
        answer = PRONOUN_SETS[pick]
        rows.append([item.replicate, item.item_id, item.setting, item.n_distractors, item.occupation,
                     item.participant, item.case, item.system, item.target, item.distractor_system,
                     item.distractor, item.texts()[item.gold], *row_scores.tolist(), answer,
                     answer in item.accepted, item.distractor is not None and answer == item.distractor, bool(tied)])
    frame = pd.DataFrame(rows, columns=ITEM_COLUMNS)
    return frame.astype({"n_distractors": "Int64"})


def read_items(path: Path) -> pd.DataFrame:
    """items.csv back as written: empty distractor fields as None, flags as booleans."""
    frame = pd.read_csv(path, keep_default_na=False, dtype={"item_id": str, "n_distractors": str})
    for column in ("distractor_system", "distractor"):
        frame[column] = frame[column].replace("", None)
    frame["n_distractors"] = pd.to_numeric(frame["n_distractors"].replace("", None)).astype("Int64")
    for column in ("correct", "distractor_error", "tie"):
        frame[column] = frame[column].astype(str).eq("True")
    return frame


def _run_key(*parts: str) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:24]


def _previous(summary_path: Path, run_key: str, overwrite: bool) -> dict | None:
    """A finished run with the same key (reused), else None; a different one needs overwrite."""
    if not summary_path.is_file():
        return None
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    if summary.get("meta", {}).get("run_key") == run_key and not overwrite:
        return summary
    if not overwrite:
        raise QueerbiasError(f"{summary_path.parent} already holds a finished GRUFF run of another model, "
                             "template set or configuration; choose another output folder or overwrite")
    summary_path.unlink()
    return None
