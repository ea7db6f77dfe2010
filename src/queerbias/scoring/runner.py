"""Score a pair set into an output directory: resumable, sharded, with progress.

Raw sentence scores are appended in chunks to `DIR/.partial/rank<R>.jsonl`
(flushed and fsynced), keyed by the run (model fingerprint, data checksum,
scoring config, sample) and by pair. A killed run restarted with the same
command skips what is already there. Under `accelerate launch` every process
scores its own shard; the main process merges the shards and writes the outputs.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import shutil
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from tqdm.auto import tqdm

from queerbias.distributed import process_state
from queerbias.errors import QueerbiasError
from queerbias.models.loading import LoadedModel, inspect_model, load_model
from queerbias.pairs.io import load_pairs
from queerbias.pairs.schema import Pair, PairSet
from queerbias.scoring.config import ScoringConfig
from queerbias.scoring.pair_scores import pair_outcome, score_pairs, screen_pairs
from queerbias.scoring.results import package_versions, write_outputs
from queerbias.scoring.scorer import SentenceEncoder, make_scorer

log = logging.getLogger(__name__)

CHUNK_PAIRS = 128  # pairs scored between two saves of progress


def sample_pairs(pair_set: PairSet, n: int | None, seed: int = 0) -> PairSet:
    """A seeded subset of n pairs in their original order (the whole set when n is None)."""
    if n is not None and n < 1:
        raise QueerbiasError(f"a sample needs at least 1 pair, got {n}")
    if n is None or n >= len(pair_set):
        return pair_set
    chosen = sorted(random.Random(seed).sample(range(len(pair_set)), n))
    meta = {**pair_set.meta, "sample": {"n": n, "seed": seed, "of": len(pair_set)}}
    return PairSet(f"{pair_set.name}[sample {n}, seed {seed}]",
                   [pair_set.pairs[i] for i in chosen], pair_set.source, meta=meta)


def score_to_dir(
    model_spec: str | LoadedModel,
    pairs_spec: str | PairSet,
    out_dir: str | Path,
    config: ScoringConfig | None = None,
    *,
    batch_size: int | str = "auto",
    sample: int | None = None,
    seed: int = 0,
    overwrite: bool = False,
    progress: bool = True,
    chunk_pairs: int = CHUNK_PAIRS,
    extra_meta: dict | None = None,
    identical: str = "error",
    **load_options,
) -> dict:
    """Score and write the output contract; returns the summary (on every process).

    Pairs are screened with the tokenizer before the weights load (`screen_pairs`;
    `identical` decides on pairs whose texts become the same tokens).
    """
    state = process_state()
    config = config or ScoringConfig()
    out_dir = Path(out_dir)
    started = time.perf_counter()
    pair_set = pairs_spec if isinstance(pairs_spec, PairSet) else load_pairs(pairs_spec)
    pair_set = sample_pairs(pair_set, sample, seed)
    found = model_spec if isinstance(model_spec, LoadedModel) else inspect_model(model_spec, **load_options)
    encoder = SentenceEncoder(found.tokenizer, found.kind, config, found.max_length)
    pair_set = screen_pairs(pair_set, encoder, identical)
    lm = found if isinstance(found, LoadedModel) else load_model(found)
    loaded = time.perf_counter()
    run_key = _run_key(lm.fingerprint, pair_set.checksum, config.scoring_id)
    summary_path = out_dir / "summary.json"
    if state.is_main_process:
        out_dir.mkdir(parents=True, exist_ok=True)
        _check_previous(summary_path, run_key, overwrite)
    state.wait_for_everyone()
    if summary_path.exists():
        log.info("%s already holds this finished run; nothing to do", out_dir)
        return json.loads(summary_path.read_text())

    partial = out_dir / ".partial"
    partial.mkdir(exist_ok=True)
    shard = pair_set.pairs[state.process_index::state.num_processes]
    done = _read_partial(partial, run_key)
    todo = [p for p in shard if p.key not in done]
    if len(todo) < len(shard):
        log.info("resuming: %d of %d pairs already scored", len(shard) - len(todo), len(shard))
    scorer = make_scorer(lm, config, batch_size)
    with open(partial / f"rank{state.process_index}.jsonl", "a", encoding="utf-8") as sink, tqdm(
        total=len(shard), initial=len(shard) - len(todo), unit="pair", desc="scoring",
        disable=not progress or not state.is_local_main_process, dynamic_ncols=True,
    ) as bar:
        for start in range(0, len(todo), chunk_pairs):
            chunk = todo[start:start + chunk_pairs]
            _append(sink, run_key, chunk, score_pairs(scorer, chunk))
            bar.update(len(chunk))
    state.wait_for_everyone()
    scored = time.perf_counter()

    if state.is_main_process:
        raw = _read_partial(partial, run_key)
        missing = [p.pair_id for p in pair_set.pairs if p.key not in raw]
        if missing:
            raise QueerbiasError(f"{len(missing)} pairs have no score (e.g. {missing[:3]}); "
                                 "rerun the same command to finish them")
        scores = [pair_outcome(p, *raw[p.key], config.decimals) for p in pair_set.pairs]
        meta = _meta(lm, pair_set, config, run_key, state, started, loaded, scored, extra_meta)
        write_outputs(out_dir, scores, meta)
        shutil.rmtree(partial, ignore_errors=True)
    state.wait_for_everyone()
    return json.loads(summary_path.read_text())


def _run_key(*parts: str) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:24]


def _check_previous(summary_path: Path, run_key: str, overwrite: bool) -> None:
    """Keep a matching finished run; refuse to silently replace a different one."""
    if not summary_path.exists():
        return
    previous = json.loads(summary_path.read_text()).get("meta", {}).get("run_key")
    if previous == run_key and not overwrite:
        return
    if not overwrite:
        raise QueerbiasError(f"{summary_path.parent} already holds a finished run of another "
                             "model, data set or scoring config; choose another --out or pass "
                             "--overwrite")
    summary_path.unlink()
    shutil.rmtree(summary_path.parent / ".partial", ignore_errors=True)


def _read_partial(partial: Path, run_key: str) -> dict[str, tuple[float, float]]:
    """Raw (score_more, score_less) by pair key from every shard file of this run.

    A line cut short by a kill is skipped: its pairs are simply scored again.
    """
    found = {}
    for file in sorted(partial.glob("rank*.jsonl")):
        for line in file.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if record.get("run") == run_key:
                found[record["key"]] = (record["more"], record["less"])
    return found


def _append(sink, run_key: str, pairs: Sequence[Pair], scores) -> None:
    lines = [json.dumps({"run": run_key, "key": p.key, "more": s.score_more, "less": s.score_less})
             for p, s in zip(pairs, scores)]
    sink.write("\n".join(lines) + "\n")
    sink.flush()
    os.fsync(sink.fileno())


def _meta(lm: LoadedModel, pair_set: PairSet, config: ScoringConfig, run_key: str, state, started: float,
          loaded: float, scored: float, extra: dict | None) -> dict:
    n = len(pair_set)
    return {
        "model": lm.describe(),
        "data": {"name": pair_set.name, "source": pair_set.source, "checksum": pair_set.checksum,
                 "n_pairs": n, **pair_set.meta},
        "scoring": {**config.to_dict(), "deviations": config.deviations()},
        "scoring_id": config.scoring_id,
        "run_key": run_key,
        "versions": package_versions(),
        "timings": {"load_s": round(loaded - started, 3), "score_s": round(scored - loaded, 3),
                    "pairs_per_s": round(n / max(scored - loaded, 1e-9), 2)},
        "environment": {"device": str(lm.device), "processes": state.num_processes},
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        **(extra or {}),
    }
