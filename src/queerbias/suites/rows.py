"""A suite's item rows as a typed DataFrame, and as the CSV or JSONL file of a run.

The same typing applies to rows fresh from `evaluate` (merged from the progress
files) and to rows read back from a finished run, so `summarise` and `compare` see
identical frames either way. Floats are written with `repr`, which reads back to the
same number, and None as an empty CSV field (null in JSONL).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from queerbias.errors import DataError
from queerbias.fileio import iter_jsonl
from queerbias.suites.protocol import Column


def frame(records: Sequence[dict], columns: Sequence[Column]) -> pd.DataFrame:
    """Records (dicts) as a frame with the declared columns, in order and typed."""
    raw = pd.DataFrame.from_records(list(records), columns=[c.name for c in columns])
    return pd.DataFrame({c.name: _typed(raw[c.name], c) for c in columns}, index=range(len(raw)))


def _typed(values: pd.Series, column: Column) -> pd.Series:
    present = values.map(lambda v: v is not None and not (isinstance(v, float) and v != v))
    if column.type is float:
        return pd.to_numeric(values, errors="raise").astype(float)
    if column.type is int:
        return values.astype("Int64") if column.nullable else values.astype("int64")
    if column.type is bool:
        if column.nullable and not present.all():
            return values.astype(object).where(present, None)
        return values.astype(bool)
    return values.astype(object).where(present, None)


def to_text(rows: pd.DataFrame, columns: Sequence[Column], filename: str) -> str:
    """The items file's text: CSV (header, one line per row) or JSONL (one object per line)."""
    names = [c.name for c in columns]
    if filename.endswith(".jsonl"):
        return "".join(json.dumps({n: _json_value(r[n]) for n in names}, ensure_ascii=False, allow_nan=False) + "\n"
                       for r in rows.to_dict("records"))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(names)
    for record in rows.to_dict("records"):
        writer.writerow([_csv_value(record[n]) for n in names])
    return buffer.getvalue()


def _json_value(value):
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return None
    return value


def _csv_value(value) -> str:
    value = _json_value(value)
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def read(path: Path, columns: Sequence[Column]) -> pd.DataFrame:
    """A run's items file back as the typed frame `frame` builds; bad content names file and row."""
    if path.suffix == ".jsonl":
            return frame([record for _, record in iter_jsonl(path)], columns)
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as err:
        raise DataError(path, f"not a readable items file ({err})") from None
    missing = [c.name for c in columns if c.name not in raw.columns and not c.optional]
    if missing:
        raise DataError(path, f"missing column(s) {', '.join(missing)}")
    for c in columns:
        if c.name not in raw.columns:
            raw[c.name] = _csv_value(c.default)
    return frame([_from_csv(record, columns, path, row) for row, record in enumerate(raw.to_dict("records"), 2)],
                 columns)


def _from_csv(record: dict, columns: Sequence[Column], path: Path, row: int) -> dict:
    converted = {}
    for c in columns:
        text = record[c.name]
        if text == "" and (c.nullable or c.type is float):
            converted[c.name] = None
            continue
        try:
            converted[c.name] = _parse(text, c.type)
        except ValueError:
            raise DataError(path, f"{text!r} is not a finite {c.type.__name__}", row=row, field=c.name) from None
    return converted


def _parse(text: str, kind: type):
    if kind is bool:
        if text not in ("True", "False"):
            raise ValueError(text)
        return text == "True"
    if kind is int:
        return int(text)
    if kind is float:
        value = float(text)
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{text!r} is not a finite number")
        return value
    if kind is object:
        return json.loads(text)
    return text


def records(rows: pd.DataFrame) -> list[dict]:
    """The rows as dicts with None (not NaN or pd.NA) for missing values, for code written on dicts."""
    return [{key: _json_value(value) for key, value in record.items()} for record in rows.to_dict("records")]
