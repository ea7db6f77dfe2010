"""The one strict reader of record files: CSV, TSV and JSONL, for pairs, suites and corpora.

Python's readers are lenient where a benchmark must not be: `csv.DictReader` keeps the
last of two columns with one name, `json.loads` the last of two keys, and both let
`NaN` or a list through where text belongs, which later code turns into the string
"nan" or "['a']" and scores. Here a duplicate column or key, a non-finite number and a
value longer than `MAX_FIELD` characters (what the CSV reader allows, for JSONL too)
are refused, naming the file, row and field, and so are JSON integers and nesting beyond
`bounds` (Python's own limits raise a traceback); `text` refuses a value that is not a
string where text is expected.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from queerbias.bounds import BoundError, bounded_int, check_depth, too_deep
from queerbias.errors import DataError

MAX_FIELD = csv.field_size_limit()  # 131072 characters, the csv module's own bound
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
TSV_SUFFIXES = (".tsv", ".tab")


def parse_json_object(line: str, path: str | Path, row: int, max_field: int | None = MAX_FIELD) -> dict[str, Any]:
    """One JSONL line as an object: no duplicate keys, no NaN/Infinity, no value over `max_field`."""
    if max_field is not None and len(line) > 16 * max_field:
        raise DataError(path, f"a line of {len(line)} characters, more than {16 * max_field}: not a record "
                              "file?", row=row)
    try:
        record = loads_strict(line)
    except json.JSONDecodeError as err:
        raise DataError(path, f"invalid JSON ({err.msg})", row=row) from None
    except _Refused as err:
        raise DataError(path, str(err), row=row, field=err.field) from None
    except BoundError as err:
        raise DataError(path, str(err), row=row) from None
    if not isinstance(record, dict):
        raise DataError(path, f"each line must be a JSON object, got {type(record).__name__}", row=row)
    if max_field is not None:
        for key, value in record.items():
            if isinstance(value, str) and len(value) > max_field:
                raise DataError(path, f"a value is longer than {max_field} characters: not a record file?",
                                row=row, field=key)
    return record


def loads_strict(text: str) -> Any:
    """A JSON document with the rules of a record: no duplicate keys, no NaN/Infinity, integers and
    nesting within `bounds` (a `ValueError` saying which; `json.JSONDecodeError` for broken JSON)."""
    try:
        document = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant,
                              parse_int=bounded_int)
    except RecursionError:
        raise BoundError(too_deep()) from None
    check_depth(document)
    return document


class _Refused(ValueError):
    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    record: dict[str, Any] = {}
    for key, value in pairs:
        if key in record:
            raise _Refused(f"the key {key!r} appears twice in one object (the second would silently win)", key)
        record[key] = value
    return record


def _no_constant(name: str):
    raise _Refused(f"non-finite number {name}: JSON allows no NaN or Infinity; give a finite number or text")


def check_header(path: str | Path, names: list[str] | None, row: int = 1) -> list[str]:
    """A CSV/TSV header's column names (stripped): every one named and none twice."""
    names = [name.strip() for name in (names or [])]
    seen: dict[str, int] = {}
    for position, name in enumerate(names, start=1):
        if name in seen:
            raise DataError(path, f"columns {seen[name]} and {position} are both named {name!r} (the second "
                                  "would silently win); rename or remove one", row=row, field=name)
        seen[name] = position
    return names


def read_records(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(row number as an editor shows it, record) for a CSV, TSV or JSONL file's text.

    CSV/TSV values are strings; JSONL values keep their JSON type (check them with `text`).
    """
    if path.suffix.lower() in JSONL_SUFFIXES:
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                yield number, parse_json_object(line, path, number)
        return
    yield from _csv_records(path, text, "\t" if path.suffix.lower() in TSV_SUFFIXES else ",")


def _csv_records(path: Path, text: str, delimiter: str) -> Iterator[tuple[int, dict[str, str]]]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader, None)
    except csv.Error as err:
        raise DataError(path, _csv_problem(err), row=1) from None
    if header is None:
        return
    names = check_header(path, header)
    while True:
        start = reader.line_num + 1  # where the next record begins
        try:
            values = next(reader)
        except StopIteration:
            return
        except csv.Error as err:
            raise DataError(path, _csv_problem(err), row=reader.line_num + 1) from None
        end = reader.line_num
        if not values:
            continue  # a blank line, as DictReader skips it
        if len(values) > len(names):
            raise DataError(path, f"more fields than the header has ({len(names)})", row=end)
        record = dict(zip(names, values + [""] * (len(names) - len(values))))
        joined = "".join(values)  # one search in C, not one per field
        if "\n" in joined or "\r" in joined:
            broken = next(k for k, v in record.items() if "\n" in v or "\r" in v)
            until = "the end of the file" if end >= text.count("\n") else f"row {end}"
            raise DataError(path, f"a quote (\") opened in this field is not closed before {until}, "
                            f"so rows {start}-{end} were read as one value; close or remove the "
                            "quote", row=start, field=broken)
        yield end, record


def _csv_problem(err: csv.Error) -> str:
    if "field larger than field limit" in str(err):
        return f"a value is longer than {MAX_FIELD} characters: an unclosed quote, or not a pair file?"
    return f"not readable as CSV/TSV ({err})"


def text(record: dict[str, Any], field: str, path: str | Path, row: int) -> str:
    """The value of `field` where text is expected: a string (missing or null: ""); a number, a
    boolean, a list or an object is refused rather than scored as its Python text."""
    value = record.get(field)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise DataError(path, f"must be text, got the JSON {_json_kind(value)} {json.dumps(value)[:40]}",
                        row=row, field=field)
    return value


def identifier(record: dict[str, Any], field: str, path: str | Path, row: int) -> str:
    """An id column: text, or a whole number (JSONL ids are often numbers)."""
    value = record.get(field)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return text(record, field, path, row)


def _json_kind(value: Any) -> str:
    return ("boolean" if isinstance(value, bool) else "number" if isinstance(value, (int, float)) else
            "list" if isinstance(value, list) else "object" if isinstance(value, dict) else type(value).__name__)
