"""One run of any suite into a folder, and loading finished runs back.

`run_to_dir` does everything around a suite's `evaluate`: the items are cut into fixed
chunks; each chunk's rows are appended to `DIR/.partial/rank<R>.jsonl` (fsynced),
keyed by the run (suite, model fingerprint, data checksum, settings) and the chunk, so
a killed run restarted with the same command evaluates only what is missing. Under
`accelerate launch` process R takes chunks R, R+W, ...; the main process merges them
and writes the items file, summary.md, the plot and, last, summary.json, so a folder
with a summary.json always holds a finished run and no process writes another's files.
Because chunks are fixed by the item order, results do not depend on the number of
processes or on where a run was interrupted.

`evaluate_run` does the same in memory, writing nothing. `load_run` returns a typed
`RunRecord`; the rows it reads are checked against the checksum in summary.json.

What only running needs (torch and accelerate through `distributed` and the model loader,
the progress bar) is imported when a run starts, so reading runs back for compare, report
and the card loads no model machinery.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import logging
import math
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from queerbias import killpoint
from queerbias.errors import DataError, QueerbiasError
from queerbias.fileio import atomic_write, cut_partial_line, dump_json_strict, existing_folder
from queerbias.options import from_mapping, result_settings
from queerbias.outputs import OutputLock
from queerbias.progress import bar
from queerbias.records import loads_strict
from queerbias.suites import integrity
from queerbias.suites import rows as row_io
from queerbias.suites.markdown import summary_markdown
from queerbias.suites.paths import PARTIAL_DIR, SUMMARY_FILE
from queerbias.suites.protocol import DataRef, Suite
from queerbias.suites.provenance import model_use, run_key, run_meta
from queerbias.suites.registry import LEGACY_SUITE, get_declaration, get_suite, list_declarations

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2  # 1: summaries before the suite protocol (pair runs without `suite`)


# -- running ------------------------------------------------------------------------

def run_to_dir(suite: Suite, lm, data, out_dir: str | Path, settings=None, *, extra_meta: dict | None = None,
               overwrite: bool = False, progress: bool | str = True, **load_options) -> dict:
    """Evaluate `lm` (a loaded model or a spec) on `data` (a spec, or `load_data`'s result) into
    `out_dir`; returns the summary on every process. The main process holds the folder's lock
    throughout: a second run into the same folder is refused while this one runs. `progress`: a
    bar on the main process (a text: the bar's label, else the suite's name)."""
    from queerbias.distributed import process_state  # torch: where a run evaluates; reading one needs none

    state = process_state()
    with OutputLock(out_dir, f"a {suite.name} run") if state.is_main_process else contextlib.nullcontext():
        return _run_to_dir(state, suite, lm, data, out_dir, settings, extra_meta, overwrite, progress,
                           load_options)


def _run_to_dir(state, suite: Suite, lm, data, out_dir, settings, extra_meta, overwrite, progress,
                load_options) -> dict:
    settings = settings if settings is not None else suite.Settings()
    out_dir = Path(out_dir)
    started = time.perf_counter()
    lm, items, ref, language, method, key = keyed_run(suite, lm, data, settings, load_options)
    loaded = time.perf_counter()
    summary_path = out_dir / SUMMARY_FILE
    if state.is_main_process:
        out_dir.mkdir(parents=True, exist_ok=True)
        _check_previous(summary_path, key, overwrite, {"model": lm.fingerprint, "data": ref.checksum,
                                                      "settings": result_settings(settings)})
    state.wait_for_everyone()
    if summary_path.exists():
        log.info("%s already holds this finished run; nothing to do", out_dir)
        return read_json_file(summary_path, "run summary")

    partial = out_dir / PARTIAL_DIR
    partial.mkdir(exist_ok=True)
    chunks = _chunks(items, suite.chunk_size(settings), suite.even_chunks)
    mine = [c for c in range(len(chunks)) if c % state.num_processes == state.process_index]
    shapes = _shapes(suite, chunks, settings)
    done = _read_partial(partial, key, shapes, suite.columns)
    todo = [c for c in mine if c not in done]
    if len(todo) < len(mine):
        log.info("resuming: %d of %d chunks already evaluated", len(mine) - len(todo), len(mine))
    sink_path = partial / f"rank{state.process_index}.jsonl"
    cut_partial_line(sink_path)
    total = sum(len(chunks[c]) for c in mine)
    with _eval_mode(lm, language), open(sink_path, "a", encoding="utf-8") as sink, _bar(
            total, total - sum(len(chunks[c]) for c in todo), progress if isinstance(progress, str) else suite.name,
            bool(progress) and state.is_local_main_process) as bar:
        produced = suite.evaluate(lm, (chunks[c] for c in todo), settings)
        starts = _starts(chunks)
        for index, rows in zip(todo, produced, strict=True):
            _append(sink, key, index, starts[index], len(chunks[index]), rows, suite)
            bar.update(len(chunks[index]))
    state.wait_for_everyone()
    evaluated = time.perf_counter()

    if state.is_main_process:
        found = _read_partial(partial, key, shapes, suite.columns)
        missing = [c for c in range(len(chunks)) if c not in found]
        if missing:
            raise QueerbiasError(f"{len(missing)} of {len(chunks)} chunks have no results; rerun the same "
                                 "command to finish them")
        rows = [row for c in range(len(chunks)) for row in found[c]]
        meta = run_meta(lm, ref, settings, method, key, state.num_processes, (started, loaded, evaluated),
                        len(items), extra_meta, language)
        record = summarise_rows(suite, rows, settings, meta)
        suite.check_rows(record.rows(), record.summary, partial)  # decisions follow from the scores
        write_run(suite, record, out_dir)
        shutil.rmtree(partial, ignore_errors=True)
    state.wait_for_everyone()
    return read_json_file(summary_path, "run summary")


def evaluate_run(suite: Suite, lm, data, settings=None, *, extra_meta: dict | None = None, label: str = "run",
                 progress: bool = False, **load_options) -> RunRecord:
    """The same evaluation in memory in this process: nothing is written; returns the record."""
    settings = settings if settings is not None else suite.Settings()
    started = time.perf_counter()
    lm, items, ref, language, method, key = keyed_run(suite, lm, data, settings, load_options)
    loaded = time.perf_counter()
    chunks = _chunks(items, suite.chunk_size(settings), suite.even_chunks)
    rows = []
    with _eval_mode(lm, language), _bar(len(items), 0, suite.name, progress) as bar:
        for chunk, produced in zip(chunks, suite.evaluate(lm, iter(chunks), settings), strict=True):
            rows += _checked_rows(produced, suite)
            bar.update(len(chunk))
    meta = run_meta(lm, ref, settings, method, key, 1, (started, loaded, time.perf_counter()), len(items),
                    extra_meta, language)
    record = summarise_rows(suite, rows, settings, meta)
    record.label = label
    return record


class KeyedRun(NamedTuple):
    """What a run evaluates and the key the store files it under."""

    lm: object
    items: Sequence  # the items `screen` kept
    ref: DataRef
    language: str | None  # passed as `langs` (models with language embeddings)
    method: dict  # `Suite.run_meta`
    key: str


def keyed_run(suite: Suite, lm, data, settings, load_options: dict | None = None) -> KeyedRun:
    """The model, items, language and run key of a run of `suite`. One function for the store and for every
    caller that must know a run's key before it runs (a shared base evaluation, `train.shared_base`), so no
    option that enters the key (an XLM's language and kind) can be left out by one of them."""
    items, ref = _data(suite, data, settings)
    lm, items, ref, language = _screened_model(suite, lm, items, ref, settings, load_options or {})
    method = suite.run_meta(lm, settings)
    return KeyedRun(lm, items, ref, language, method,
                    run_key(suite, lm.fingerprint, ref, settings, method, model_use(lm, language)))


def _data(suite: Suite, data, settings) -> tuple[Sequence, DataRef]:
    items, ref = data if isinstance(data, tuple) else suite.load_data(data, settings)
    if not len(items):
        raise QueerbiasError(f"{suite.name}: no items to evaluate in {ref.name}; check the data and the sample")
    return items, ref


def _screened_model(suite: Suite, lm, items: Sequence, ref: DataRef, settings, load_options: dict):
    """The model, the items the suite keeps after `screen` (which for `screens` suites runs before the
    weights load: a bad item is refused in seconds, not after minutes of loading) and the language
    the run passes as `langs` (models with language embeddings: `lang`, else the data's language)."""
    options = {key: value for key, value in load_options.items() if key != "lang"}

    def language(model) -> str | None:
        from queerbias.models.languages import bound_language, run_language  # torch: a model is at hand

        if getattr(model, "config", None) is None:  # not a transformers model: nothing takes langs
            return None
        current = bound_language(model) if hasattr(model, "modules") else None  # an InspectedModel has none
        return run_language(model.config, load_options.get("lang"), ref.details.get("language"), current,
                            getattr(lm, "spec", lm))

    if not isinstance(lm, str):
        return (lm, *suite.screen(lm, items, ref, settings), language(getattr(lm, "model", lm)))
    if not suite.screens:
        loaded = suite.load_model(lm, **options)
        return loaded, items, ref, language(getattr(loaded, "model", loaded))
    from queerbias.models.loading import inspect_model  # torch, transformers: only to load a model

    found = inspect_model(lm, **options)
    run = language(found)  # refused before the weights load
    items, ref = suite.screen(found, items, ref, settings)
    return suite.load_model(found), items, ref, run


def _chunks(items: Sequence, size: int, even: bool = True) -> list[Sequence]:
    """Contiguous chunks of at most `size` items; `even` (`Suite.even_chunks`): an even number of them
    (one for a single item) with sizes within one of each other. The processes take the chunks in
    turn, so two processes (two cores, two GPUs) get equal shares: 378 items in chunks of 128 gave
    one 256 and the other 122, and the evaluation lasted as long as the larger share. The chunks do
    not depend on the process count, so one process and two compute the same batches and write the
    same bytes."""
    if not even:
        return [items[start:start + size] for start in range(0, len(items), size)]
    count = -(-len(items) // size)
    count += count % 2 if len(items) > 1 else 0
    bounds = [len(items) * part // count for part in range(count + 1)] if count else [0]
    return [items[start:end] for start, end in zip(bounds, bounds[1:])]


def _starts(chunks: list[Sequence]) -> list[int]:
    """Where each chunk begins among the items: with its length, what a saved chunk must match."""
    return list(itertools.accumulate((len(chunk) for chunk in chunks[:-1]), initial=0))[:len(chunks)]


def summarise_rows(suite: Suite, rows: list[dict], settings, meta: dict) -> RunRecord:
    """Rows (dicts) -> the typed frame -> the suite's metrics and headline -> the summary document.

    Public so that a run can be built from rows computed elsewhere; `write_run` writes it.
    """
    frame = row_io.frame(rows, suite.columns)
    metrics = suite.summarise(frame, settings)
    headline = suite.headline({**metrics, "meta": meta})
    if headline.overall is None:
        raise QueerbiasError(f"{suite.name}: the run gave no {headline.label} from its {len(frame)} rows "
                             "(nothing could be evaluated); no results are written")
    summary = {"suite": suite.name, "schema_version": SCHEMA_VERSION, "headline": headline.to_dict(),
               **metrics, "meta": meta}
    dump_json_strict(summary, f"{suite.name} summary")  # refuse NaN before anything is written
    return RunRecord(suite, "run", None, summary, frame)


def write_run(suite: Suite, record: RunRecord, out_dir: Path) -> None:
    """items file, summary.md, the plot, then summary.json (its presence means "finished")."""
    text = row_io.to_text(record.rows(), suite.columns, suite.items_file)
    record.summary["meta"]["items"] = {"file": suite.items_file, "rows": len(record.rows()),
                                       "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}
    atomic_write(out_dir / suite.items_file, text)
    atomic_write(out_dir / "summary.md", summary_markdown(suite, record.summary))
    suite.plot(record.summary, out_dir / "summary.png")
    atomic_write(out_dir / SUMMARY_FILE, dump_json_strict(record.summary, "summary"))


class _eval_mode:
    """The model in eval mode, passing the run's language as `langs` (`models.languages`), while it is
    evaluated; put back as it was found."""

    def __init__(self, lm, language: str | None = None):
        self.model, self.language = getattr(lm, "model", None), language

    def __enter__(self):
        self.was_training = self.model is not None and self.model.training
        if self.model is not None:
            from queerbias.models.languages import language_bound  # torch: a model is at hand

            self.model.eval()
            self.bound = language_bound(self.model, self.language)
            self.bound.__enter__()

    def __exit__(self, *exc):
        if self.model is not None:
            self.bound.__exit__(*exc)
            self.model.train(self.was_training)


def _bar(total: int, initial: int, name: str, enabled: bool):
    return bar(total=total, initial=initial, unit="item", desc=name, disable=not enabled)


# -- partial results ----------------------------------------------------------------

def _check_previous(summary_path: Path, key: str, overwrite: bool, now: dict) -> None:
    """Keep a matching finished run; refuse to silently replace a different one, naming what differs
    (`now`: this run's model fingerprint, data checksum, settings and method)."""
    if not summary_path.exists():
        return
    try:
        meta = read_json_file(summary_path, "run summary").get("meta", {})
        previous = meta.get("run_key")
    except (QueerbiasError, AttributeError):  # damaged: never the same run
        meta, previous = {}, None
    if previous == key and not overwrite:
        return
    if not overwrite:
        raise QueerbiasError(f"{summary_path.parent} already holds a finished run of {_difference(meta, now)}; "
                             "choose another --out or pass --overwrite to replace it")
    if previous is None:  # --overwrite replaces a run, never a file another tool wrote
        raise QueerbiasError(f"{summary_path} is no summary a queerbias run wrote (no run key); --overwrite "
                             "replaces only a run's; move the file away or choose another --out")
    summary_path.unlink()
    shutil.rmtree(summary_path.parent / PARTIAL_DIR, ignore_errors=True)


def _difference(meta: dict, now: dict) -> str:
    """What a finished run's meta says differs from this run: "another model (weights fingerprint)",
    "other settings: margin (0.693 in the folder, 1.5 now)", ..."""
    if not meta:
        return "another model, data set or settings (its summary cannot be read)"
    found = []
    if (meta.get("model") or {}).get("fingerprint") != now["model"]:
        found.append("another model (weights fingerprint)")
    if (meta.get("data") or {}).get("checksum") != now["data"]:
        found.append("other data (checksum)")
    settings = meta.get("settings") or {}
    changed = [f"{name} ({settings.get(name)!r} in the folder, {value!r} now)" for name, value in now["settings"].items()
               if settings.get(name) != value]
    if changed:
        found.append("other settings: " + ", ".join(changed))
    if not found:
        found.append("another scoring method or queerbias version (run key)")
    return "; ".join(found)


def _append(sink, key: str, index: int, start: int, n_items: int, rows: list[dict], suite: Suite) -> None:
    line = json.dumps(integrity.chunk_record(key, index, start, n_items, _checked_rows(rows, suite)), allow_nan=False,
                      ensure_ascii=False)
    sink.write(line + "\n")
    sink.flush()
    os.fsync(sink.fileno())
    killpoint.reached("chunk")


def _checked_rows(rows: list[dict], suite: Suite) -> list[dict]:
    """The rows, refused when a value is NaN or infinite: a broken model must never look unbiased."""
    for row in rows:
        for column, value in row.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise QueerbiasError(
                    f"{suite.name}: {column} is {value} for item {_item_name(suite, row)}; the model produced a "
                    "non-finite score (NaN or infinite weights, or a diverged fine-tune); nothing is written")
    return rows


def _item_name(suite: Suite, row: dict) -> str:
    return "/".join(str(row.get(column)) for column in suite.key_columns)


def _shapes(suite: Suite, chunks: list[Sequence], settings) -> list[integrity.ChunkShape]:
    """What each chunk's progress line must hold (`integrity.usable_chunk`)."""
    return [integrity.ChunkShape(start, len(chunk), suite.chunk_rows(chunk, settings), suite.row_items(chunk))
            for start, chunk in zip(_starts(chunks), chunks, strict=True)]


def _read_partial(partial: Path, key: str, shapes: list[integrity.ChunkShape], columns) -> dict[int, list[dict]]:
    """Rows by chunk from every shard file of this run (lines of other runs are ignored).

    A last line without its newline was cut short by a kill and is evaluated again, and so
    is a chunk whose saved start or item count is not its own (`integrity.usable_chunk`); any other
    line that is not a well-formed record, or whose rows are not its chunk's, is refused, naming
    file and line.
    """
    found = {}
    for path in sorted(partial.glob("rank*.jsonl")):
        text = integrity.read_text(path, "progress file", integrity.MAX_PROGRESS_BYTES)
        lines = text.split("\n")
        for number, line in enumerate(lines, start=1):
            if not line.strip() or (number == len(lines) and not text.endswith("\n")):
                continue
            record = _partial_record(line, path, number)
            if record["run"] != key:
                continue
            chunk = record["chunk"]
            if 0 <= chunk < len(shapes) and integrity.usable_chunk(record, shapes[chunk], columns, path, number):
                found[chunk] = record["rows"]
            else:
                log.warning("%s, line %d: chunk %d does not hold the items it holds now; evaluating it again",
                            path, number, chunk)
    return found


def _partial_record(line: str, path: Path, number: int) -> dict:
    try:
        record = loads_strict(line)  # no repeated key, no NaN
    except (json.JSONDecodeError, ValueError) as err:
        raise DataError(path, f"not a progress record ({err}); delete {path.parent} to start over",
                        row=number) from None
    ok = (isinstance(record, dict) and isinstance(record.get("run"), str) and isinstance(record.get("chunk"), int)
          and isinstance(record.get("rows"), list) and all(isinstance(r, dict) for r in record["rows"]))
    if not ok:
        raise DataError(path, f"not a progress record (expected an object with run, chunk and rows); "
                              f"delete {path.parent} to start over", row=number)
    return record


def read_json_file(path: Path, what: str):
    """Strict JSON from a regular, size-bounded UTF-8 file (`integrity.read_json`)."""
    return integrity.read_json(path, what)


# -- loading ------------------------------------------------------------------------

@dataclass(repr=False)
class RunRecord:
    """A finished run: its suite, label for tables, summary and (read on demand) rows.

    The result type of the Python API (`queerbias.score`, `run_suite`, `load_run`): `path` is
    None for a run evaluated in memory.
    """

    suite: Suite
    label: str
    path: Path | None
    summary: dict
    _rows: object = field(default=None)

    def __repr__(self) -> str:
        headline = self.headline
        overall = None if headline.overall is None else round(float(headline.overall), 4)
        return (f"RunRecord(suite={self.suite.name!r}, label={self.label!r}, path={self.path!r}, "
                f"{headline.label}={overall})")

    @property
    def meta(self) -> dict:
        return self.summary.get("meta", {})

    @property
    def step(self) -> int | None:
        """Training step of a checkpoint run, None for a plain model."""
        return self.meta.get("step")

    @property
    def perplexity(self) -> float | None:
        return self.meta.get("perplexity")

    @property
    def headline(self):
        return self.suite.headline(self.summary)

    @property
    def settings(self):
        """The run's settings (a run written before summaries carried them: the defaults)."""
        recorded = self.meta.get("settings")
        return self.suite.Settings() if recorded is None else from_mapping(self.suite.Settings, recorded,
                                                                           f"{self.path}: meta.settings")

    def describe(self) -> dict:
        """Identification for delta.json: label, path, model spec and fingerprint, step, perplexity."""
        model = self.meta.get("model", {})
        info = {"label": self.label, "path": None if self.path is None else str(self.path),
                "model": model.get("spec"), "fingerprint": model.get("fingerprint")}
        info.update({k: self.meta[k] for k in ("step", "perplexity") if k in self.meta})
        return info

    def rows(self):
        """The per-item rows, checked against summary.json (checksum, count) and against themselves."""
        if self._rows is None:
            self._rows = _read_rows(self)
        return self._rows

    @property
    def items(self):
        """The per-item rows as a DataFrame: the items file's columns, typed as read back from it."""
        return self.rows()

    def __getattr__(self, name: str):
        """The rows under the name the suite gives its items (`run.pairs` of a pair run: the columns
        and types of its pairs.csv)."""
        suite = self.__dict__.get("suite")
        if suite is None or name.startswith("_"):
            raise AttributeError(name)
        if name == suite.items_name:
            return self.rows()
        raise AttributeError(f"a {suite.name} run has no {name}; its rows are .items")

    @property
    def groups(self):
        """One row per group in table order (pairs: n, n_neutral, bias and soft score with their
        standard errors; other suites: the headline figure per entry)."""
        table = self.suite.group_table(self.summary)
        return pd.DataFrame.from_dict(table, orient="index").rename_axis("group")

    def to_markdown(self) -> str:
        """The run's summary.md."""
        return summary_markdown(self.suite, self.summary)

    _repr_markdown_ = to_markdown  # notebooks show a run as its summary


def _another_suites(summary: dict) -> bool:
    """Whether a summary without `suite` holds the metrics of another suite than the legacy one (an early
    GIFI-DE summary): some suite's summary keys, but not the legacy suite's."""
    keys = set(summary)
    return not set(get_declaration(LEGACY_SUITE).summary_keys) <= keys and any(
        set(d.summary_keys) <= keys for d in list_declarations())


def load_run(path: str | Path, label: str | None = None) -> RunRecord:
    """A finished run folder of any suite; an old summary without `suite` is a pair run's (LEGACY_SUITE)."""
    path = existing_folder(path, "run folder")
    summary_path = path / SUMMARY_FILE
    if not summary_path.exists():  # anything else there is checked as it is read
        held = held_runs(path)
        if held:
            raise QueerbiasError(f"{path}: not a run but a folder of runs ({', '.join(held)}, as a training "
                                 f"checkpoint holds one per benchmark); give one of them, e.g. {path / held[0]}")
        raise QueerbiasError(f"{path}: no summary.json, the run did not finish")
    summary = read_json_file(summary_path, "run summary")
    if not isinstance(summary, dict):
        raise QueerbiasError(f"{summary_path}: not a run summary (a JSON object)")
    name = summary.get("suite", LEGACY_SUITE)
    legacy = isinstance(summary.get("meta"), dict) and (summary["meta"].get("suite") or summary["meta"].get("view"))
    if "suite" not in summary and (legacy or _another_suites(summary)):
        raise QueerbiasError(f"{summary_path}: a run of another suite than {LEGACY_SUITE}, written before the suites "
                             "shared one run format; run it again to compare it")
    if not isinstance(name, str):
        raise QueerbiasError(f"{summary_path}: 'suite' must be a suite name, got {name!r}")
    if summary.get("schema_version", 1) > SCHEMA_VERSION:
        raise QueerbiasError(f"{summary_path}: written by a newer queerbias (schema "
                             f"{summary['schema_version']}); update queerbias to read it")
    suite = get_suite(name)
    record = RunRecord(suite, label or default_label(path, summary), path, summary)
    missing = [key for key in suite.summary_keys if key not in summary]
    if missing or not isinstance(summary.get("meta"), dict):
        raise QueerbiasError(f"{summary_path}: not a {name} summary (no {', '.join(missing) or 'meta'})")
    headline = record.headline
    if headline.overall is None:
        raise QueerbiasError(f"{summary_path}: the run has no {headline.label} (an empty run)")
    integrity.check_summary(suite, record.rows(), summary, record.settings, summary_path)
    return record


def held_runs(path: Path) -> list[str]:
    """The names of the run folders directly inside `path` (each with its summary.json), sorted: what a
    training run's checkpoint or base folder holds, one per benchmark."""
    return sorted(entry.name for entry in path.iterdir() if (entry / SUMMARY_FILE).is_file())


def default_label(path: Path, summary: dict) -> str:
    """A run's label when none is given: a training run's evaluation by its step (`base`, `step-N`,
    as the run's own compare report names them; every checkpoint's benchmark folder has the same
    name), any other run by its folder's name."""
    meta = summary.get("meta") if isinstance(summary.get("meta"), dict) else {}
    step = meta.get("step")
    if isinstance(step, int) and not isinstance(step, bool) and "run" in meta:
        return "base" if step == 0 else f"step-{step}"
    return path.resolve().name


def _read_rows(record: RunRecord):
    suite, summary_path = record.suite, record.path / SUMMARY_FILE
    recorded = record.meta.get("items") or {}
    file = record.path / recorded.get("file", suite.items_file)
    if not file.is_file():
        raise QueerbiasError(f"{record.path}: no {file.name}; is this a finished {suite.name} run?")
    data = file.read_bytes()
    if "sha256" in recorded and hashlib.sha256(data).hexdigest() != recorded["sha256"]:
        raise QueerbiasError(f"{file}: changed after the run (its sha256 differs from the one in "
                             f"{summary_path.name}); rerun the evaluation instead of editing results")
    rows = row_io.read(file, suite.columns)
    if "rows" in recorded and len(rows) != recorded["rows"]:
        raise QueerbiasError(f"{file}: {len(rows)} rows, but the run wrote {recorded['rows']}")
    duplicated = rows.duplicated(list(suite.key_columns))
    if duplicated.any():
        first = rows[duplicated].iloc[0]
        raise QueerbiasError(f"{file}: duplicate item {'/'.join(str(first[c]) for c in suite.key_columns)}")
    suite.check_rows(rows, record.summary, file)
    return rows
