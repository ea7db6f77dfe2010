"""What the run store reads back is checked before it is trusted.

A run folder outlives the process that wrote it: files get truncated, edited, replaced by
a FIFO or a huge file, or a run is resumed with another chunk size. So every file the
store reads (summary.json, progress chunks, items files) is a regular, size-bounded UTF-8
file with strict JSON; a progress chunk carries the number of its items and a digest of
its rows and is used only when both still hold (a chunk of 5 pairs saved with 2 is
evaluated again, never summarised as n=2) and its rows name the chunk's items with values of
their columns' types; and the headline figures of a summary are
recomputed from its rows when a run is loaded, so an edited summary.json is refused.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

from queerbias.errors import DataError, QueerbiasError
from queerbias.fileio import decode_utf8, regular_file
from queerbias.records import loads_strict

MAX_SUMMARY_BYTES = 64 << 20  # summaries hold figures and meta, never rows
MAX_PROGRESS_BYTES = 4 << 30  # every row of a run, as JSON lines
_TOLERANCE = 1e-6  # recomputed figures equal the written ones up to float printing


def read_text(path: Path, what: str, limit: int) -> str:
    """The text of `path`: a regular file (never a FIFO), at most `limit` bytes, UTF-8."""
    path = regular_file(path, what)
    size = path.stat().st_size
    if size > limit:
        raise DataError(path, f"{what} of {size:,} bytes, more than the {limit:,} one can be; not a file "
                              "this run wrote")
    return decode_utf8(path, path.read_bytes())


def read_json(path: Path, what: str, limit: int = MAX_SUMMARY_BYTES):
    """Strict JSON from `path`: a truncated file, NaN or Infinity, a repeated key is one clear error."""
    text = read_text(path, what, limit)
    try:
        return loads_strict(text)
    except json.JSONDecodeError as err:
        raise QueerbiasError(f"{path}: not valid JSON ({err}); the {what} is damaged or incomplete") from None
    except ValueError as err:
        raise QueerbiasError(f"{path}: not valid JSON ({err}); the {what} is damaged") from None


def rows_digest(rows: list[dict]) -> str:
    """sha256 of a chunk's rows as the progress line writes them."""
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


def chunk_record(key: str, index: int, start: int, n_items: int, rows: list[dict]) -> dict:
    """One progress line: the run, the chunk, where it begins and how many items it holds, its rows
    and their digest."""
    return {"run": key, "chunk": index, "start": start, "items": n_items, "sha256": rows_digest(rows),
            "rows": rows}


@dataclass(frozen=True)
class ChunkShape:
    """What a progress line must hold to stand for one chunk of this run: where the chunk begins and
    how many items it holds, how many rows their evaluation gives (`Suite.chunk_rows`) and what each
    row carries of its item (`Suite.row_items`; None: not checked)."""

    start: int
    n_items: int
    n_rows: int
    items: list[dict] | None


def usable_chunk(record: dict, shape: ChunkShape, columns, path: Path, line: int) -> bool:
    """Whether a progress line of this run may stand for its chunk (`shape`).

    A line of another chunking (a resume with another chunk size) or of an older
    queerbias (no start or count) is evaluated again. Refused: rows that no longer match their
    digest; a line that holds fewer or more rows than its items give (a complete-looking chunk
    of two pairs out of five); rows that name other items than the chunk's (a forged line
    whose digest was recomputed, `pair_id: 999` where pair 1 belongs) or whose values are not of
    their column's type (`score_more: "x"`, the suite's `columns`).
    """
    if record.get("start") != shape.start or record.get("items") != shape.n_items or "sha256" not in record:
        return False
    rows, chunk = record["rows"], record["chunk"]
    if rows_digest(rows) != record["sha256"]:
        raise DataError(path, f"chunk {chunk}: its rows changed after they were saved (their digest "
                              f"differs); delete {path.parent} to start over", row=line)
    if len(rows) != shape.n_rows:
        raise DataError(path, f"chunk {chunk}: declares {shape.n_items} items, whose results are {shape.n_rows} rows, "
                              f"but holds {len(rows)}; not a line this run wrote; delete {path.parent} "
                              "to start over", row=line)
    for index, row in enumerate(rows):
        problem = _row_problem(row, columns, None if shape.items is None else shape.items[index])
        if problem:
            raise DataError(path, f"chunk {chunk}, row {index + 1} of its rows: {problem}; not a line this run wrote; "
                                  f"delete {path.parent} to start over", row=line)
    return True


def _row_problem(row: dict, columns, item: dict | None) -> str | None:
    """What keeps a saved row from being one `evaluate` gave for `item`: another item's value, a
    missing column, or a value of another type than its column's (null where it allows none)."""
    for name, expected in (item or {}).items():
        if row.get(name) != expected:
            return f"{name} is {json.dumps(row.get(name), ensure_ascii=False)[:40]}, but the chunk's item has " \
                   f"{json.dumps(expected, ensure_ascii=False)[:40]}"
    for column in columns:
        if column.name not in row:
            if column.optional:
                continue
            return f"it lacks the column {column.name}"
        value = row[column.name]
        if value is None and column.nullable:
            continue
        if not isinstance(value, _JSON_TYPES[column.type]) or isinstance(value, bool) and column.type is float:
            return f"{column.name} is {json.dumps(value, ensure_ascii=False)[:40]}, not a {column.type.__name__}"
    return None


#: the JSON values a column's type reads back from (an int column takes a JSON true as 1, as pandas does)
_JSON_TYPES = {str: (str,), int: (int,), float: (int, float), bool: (bool,), object: (object,)}


def check_summary(suite, rows, summary: dict, settings, path: Path) -> None:
    """The headline figures (overall, per group, the suite's extras) recomputed from the rows
    must be the ones summary.json holds. Only the headline: it is what comparisons, reports
    and cards read, and it holds no bootstrap interval whose resampling could differ."""
    recomputed = suite.headline({**suite.summarise(rows, settings), "meta": summary.get("meta", {})}).to_dict()
    where = _difference(recomputed, suite.headline(summary).to_dict(), "headline")
    if where:
        raise QueerbiasError(f"{path}: {where} does not follow from the run's rows; the summary was edited "
                             "or belongs to other rows; rerun the evaluation")


def _difference(computed, written, where: str) -> str | None:
    """The key path of the first figure that differs (numbers within `_TOLERANCE`), else None."""
    if isinstance(computed, dict) and isinstance(written, dict):
        for key, value in computed.items():
            if key in written:
                found = _difference(value, written[key], f"{where}.{key}")
                if found:
                    return found
        return None
    if isinstance(computed, (list, tuple)) and isinstance(written, (list, tuple)):
        if len(computed) != len(written):
            return where
        return next((f for i, (c, w) in enumerate(zip(computed, written))
                     if (f := _difference(c, w, f"{where}[{i}]"))), None)
    if _number(computed) and _number(written):
        return None if _same_number(float(computed), float(written)) else \
            f"{where} ({written} written, {computed} from the rows)"
    if computed is None or written is None or isinstance(computed, (str, bool)):
        return None if computed == written else f"{where} ({written!r} written, {computed!r} from the rows)"
    return None


def _same_number(a: float, b: float) -> bool:
    """Equal, or equal once the more precise is rounded to the other's decimals (summaries and
    the tests that write them round figures differently)."""
    if math.isnan(a) or math.isnan(b) or math.isclose(a, b, rel_tol=_TOLERANCE, abs_tol=_TOLERANCE):
        return math.isnan(a) == math.isnan(b)
    decimals = min(_decimals(a), _decimals(b))
    return round(a, decimals) == round(b, decimals)


def _decimals(value: float) -> int:
    text = repr(value)
    return 0 if "e" in text or "." not in text else len(text.split(".")[1].rstrip("0"))


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) or type(value).__module__ == "numpy"
