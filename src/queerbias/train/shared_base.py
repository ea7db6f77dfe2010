"""Base evaluations shared by the runs of one model (config key `eval.base_from`).

A study trains one model under several objectives and seeds. Its base model's benchmark
results are the same in every run (same weights, items and settings), so they are
computed once: `eval.base_from: DIR` names a folder of finished base evaluations in the
layout of `RUN/base/` (`DIR/<benchmark>/summary.json`, its items file, ...).

Before a run scores its base model it takes DIR's lock, so runs of one model that start
together wait for the first. It adopts into `RUN/base/` every evaluation of DIR whose
run key (the store's: suite, weights fingerprint, data checksum after screening,
settings and the suite's method) is this run's, scores only the others (the store keeps
an adopted folder: it holds this run key), and publishes what it scored to DIR for the
runs after it. An evaluation of another model, data, settings or use of the weights (an XLM's
language and kind) is refused, naming what differs. Where DIR already holds every evaluation
(a study's base job published them), nothing is locked: the run only reads DIR. What a
summary's meta says about the run that wrote it (step, perplexities, the run's record) is
the adopting run's own; `shared_base` says where the rows came from.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import shutil
from pathlib import Path

from queerbias.errors import QueerbiasError
from queerbias.fileio import atomic_write, dump_json_strict
from queerbias.options import settings_id
from queerbias.suites.markdown import summary_markdown
from queerbias.suites.paths import SUMMARY_FILE
from queerbias.suites.provenance import model_use
from queerbias.suites.registry import get_suite
from queerbias.suites.store import keyed_run, read_json_file
from queerbias.train.benchmarks import suite_settings

log = logging.getLogger(__name__)

LOCK_FILE = ".lock"
#: meta key of an adopted summary: the shared folder and the run that scored it
SHARED = "shared_base"
#: the part of a run key that says how the weights are used (`provenance.model_use`: an XLM's language and kind)
USE = "language and kind"


def score_base(config, lm, data: dict[str, tuple], base_dir: Path, state, score) -> dict:
    """`score()` (the base model's evaluation record) with the benchmarks of
    `config.eval.base_from` reused and the missing ones published there."""
    if not config.eval.base_from:
        return score()
    source = Path(config.eval.base_from)
    names = config.benchmark_dirs()
    # every evaluation published already (by a study's base job): only read, so no lock is needed, which a
    # file system whose locks are node-local (many cluster ones) could not give
    published = all((source / name / SUMMARY_FILE).is_file() for name in names)
    with _locked(source, state.is_main_process and not published):
        if state.is_main_process:
            for index, (bench, name) in enumerate(zip(config.eval.benchmarks, names, strict=True)):
                _adopt(source / name, base_dir / name, _expected(bench, f"eval.benchmarks[{index}]", lm,
                                                                 data[name], config))
        state.wait_for_everyone()
        record = score()
        if state.is_main_process:
            own = {key: value for key, value in record.items() if key != "benchmarks"}
            for name in names:
                _settle(source / name, base_dir / name, own)
        state.wait_for_everyone()
    return record


@contextlib.contextmanager
def _locked(source: Path, main: bool):
    """An exclusive lock on SOURCE held by the main process (flock: released if it dies)."""
    if not main:
        yield
        return
    source.mkdir(parents=True, exist_ok=True)
    with open(source / LOCK_FILE, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another run of this model scores the base now: its results are ours next
            log.info("waiting for another run scoring the base model in %s", source)
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _expected(bench, where: str, lm, data: tuple, config) -> dict:
    """What the store will key this run's base evaluation by, part by part: computed by the store's own
    `keyed_run`, so every option that enters a run key (an XLM's language and kind too) is in it."""
    suite = get_suite(bench.suite)
    settings = suite_settings(bench, where, config.eval.sequences_per_batch)
    keyed = keyed_run(suite, lm, data, settings)
    return {"model (weights fingerprint)": lm.fingerprint, "data (checksum)": keyed.ref.checksum,
            "settings (settings id)": settings_id(settings), USE: model_use(keyed.lm, keyed.language),
            "run_key": keyed.key}


def _adopt(published: Path, target: Path, expected: dict) -> None:
    """Copy a matching finished evaluation into RUN/base/<benchmark> (whole, via a temporary
    folder); refuse one that does not match."""
    if (target / SUMMARY_FILE).is_file() or not (published / SUMMARY_FILE).is_file():
        return
    meta = read_json_file(published / SUMMARY_FILE, "shared base summary").get("meta", {})
    if meta.get("run_key") != expected["run_key"]:
        model = meta.get("model") or {}
        found = {"model (weights fingerprint)": model.get("fingerprint"),
                 "data (checksum)": (meta.get("data") or {}).get("checksum"),
                 "settings (settings id)": meta.get("settings_id"),
                 USE: {name: model.get(name) for name in expected[USE]}}
        differs = [what for what, value in found.items() if value != expected[what]] or \
            ["scoring method (the suite's configuration, or the queerbias version)"]
        raise QueerbiasError(f"config key 'eval.base_from': {published} holds a base evaluation of another "
                             f"{', '.join(differs)} than this run's; point eval.base_from elsewhere or delete it")
    _copy(published, target, lambda m: m.update({SHARED: {"from": str(published),
                                                          "scored_in": m.pop("scored_in", None)}}))


def _settle(published: Path, scored: Path, own: dict) -> None:
    """An adopted summary gets this run's meta; one scored here is published (run-specific meta
    left out) for the runs after this one."""
    summary = read_json_file(scored / SUMMARY_FILE, "base summary")
    if SHARED in summary["meta"]:
        _rewrite_meta(scored, lambda m: m.update({**own, "model": {**m["model"], "spec": str(scored.parent)}}))
    elif not (published / SUMMARY_FILE).is_file():
        def general(meta: dict) -> None:
            for key in own:
                meta.pop(key, None)
            meta["scored_in"] = str(scored.parent.parent)

        _copy(scored, published, general)


def _copy(origin: Path, target: Path, change) -> None:
    """ORIGIN's files as TARGET with its summary's meta changed, complete or not at all: built in a
    temporary folder beside TARGET, then renamed (a half-scored TARGET of an earlier attempt goes)."""
    incoming = target.with_name(f".incoming-{target.name}")
    shutil.rmtree(incoming, ignore_errors=True)
    shutil.copytree(origin, incoming)
    _rewrite_meta(incoming, change)
    shutil.rmtree(target, ignore_errors=True)
    incoming.rename(target)


def _rewrite_meta(folder: Path, change) -> None:
    """summary.json's meta changed, and summary.md (which names the model) written from it again."""
    path = folder / SUMMARY_FILE
    summary = read_json_file(path, "base summary")
    change(summary["meta"])
    atomic_write(folder / "summary.md", summary_markdown(get_suite(summary["suite"]), summary))
    atomic_write(path, dump_json_strict(summary, "base summary"))
