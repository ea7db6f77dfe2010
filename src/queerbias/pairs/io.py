"""Read pair files (CSV, TSV, JSONL) in the WinoQueer and CrowS-Pairs column layouts.

Real files are messy (leading spaces in values, a misspelt direction column in
WinoQueer v0), so values are whitespace-normalised and NFC-normalised; anything
that cannot be scored is an error naming the file, row and field.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import re
import unicodedata
from pathlib import Path

from queerbias.errors import DataError
from queerbias.fileio import decode_utf8, regular_file
from queerbias.pairs.schema import Pair, PairSet
from queerbias.pairs.taxonomy import canonical_group

log = logging.getLogger(__name__)

WINOQUEER = "winoqueer"
CROWS = "crows-pairs"
_LAYOUTS = {
    WINOQUEER: ("Gender_ID_x", "sent_x", "sent_y"),
    CROWS: ("sent_more", "sent_less", "bias_type"),
}
_DIRECTION_COLUMNS = ("stereo_antistereo", "stereo_antistero")  # the latter: WinoQueer v0
_ID_COLUMNS = ("pair_id", "id", "", "Unnamed: 0")
_POLICIES = ("error", "keep", "drop")


def normalise_text(value: str) -> str:
    """NFC, collapse runs of whitespace, strip; umlauts and ß stay as they are."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", value)).strip()


def read_pairs(path: str | Path, name: str | None = None, duplicates: str = "error",
               identical: str = "error") -> PairSet:
    """Parse a pair file; the layout is recognised from its columns.

    `duplicates` decides what happens to rows that repeat another row in every
    field (or reuse a pair id), and `identical` to pairs whose two sentences are
    the same: an error (default), keep them (an identical pair always scores as a
    tie, as in the reference scripts), or drop them. Distinct rows whose sentences
    coincide (common in template sets) are kept and counted.
    """
    for option, value in (("duplicates", duplicates), ("identical", identical)):
        if value not in _POLICIES:
            raise ValueError(f"{option} must be one of {_POLICIES}, got {value!r}")
    path = regular_file(path, "pair file")
    raw = path.read_bytes()
    rows = list(_rows(path, decode_utf8(path, raw)))
    if not rows:
        raise DataError(path, "the file holds no pairs")
    columns = rows[0][1].keys()
    layout = _detect_layout(path, columns)
    has_id = any(c in columns for c in _ID_COLUMNS)
    pairs, first_seen, seen_texts = [], {}, set()
    repeated = dropped = same = 0
    for ordinal, (row_number, record) in enumerate(rows, start=1):
        pair = _parse_row(path, row_number, ordinal, record, layout, columns)
        if pair.sent_more == pair.sent_less:
            same += 1
            if identical == "error":
                raise DataError(path, "the two sentences are identical, so the pair measures "
                                "nothing (pass --identical keep or drop to accept it)",
                                row=row_number, field="/".join(_sentence_fields(layout)))
            if identical == "drop":
                continue
        # A duplicate reuses a pair id or, without an id column, repeats a whole row.
        identity = pair.pair_id if has_id else tuple(sorted(record.items()))
        if identity in first_seen:
            if duplicates == "error":
                raise DataError(path, f"duplicate of row {first_seen[identity]} (pass "
                                "--duplicates keep or drop to accept it)", row=row_number,
                                field="pair_id" if has_id else None)
            if duplicates == "drop":
                dropped += 1
                continue
            pair = _with_id(pair, f"{pair.pair_id}-r{row_number}")
        first_seen.setdefault(identity, row_number)
        texts = (pair.sent_more, pair.sent_less)
        repeated += texts in seen_texts
        seen_texts.add(texts)
        pairs.append(pair)
    meta = {
        "layout": layout,
        "file_sha256": hashlib.sha256(raw).hexdigest(),
        "rows": len(rows),
        "repeated_sentence_pairs": repeated,
        "dropped_duplicates": dropped,
        "identical_pairs": same,
        "identical_policy": identical,
        "duplicates_policy": duplicates,
    }
    if repeated:
        log.info("%s: %d pairs repeat the sentences of an earlier pair", path, repeated)
    return PairSet(name=name or path.stem, pairs=pairs, source=str(path), meta=meta)


def _with_id(pair: Pair, pair_id: str) -> Pair:
    return Pair(**{**pair.__dict__, "pair_id": pair_id})


def _rows(path: Path, text: str):
    """Yield (row number as an editor shows it, record dict) for any supported format."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError(path, f"invalid JSON ({err.msg})", row=number) from None
            if not isinstance(record, dict):
                raise DataError(path, "each line must be a JSON object", row=number)
            yield number, {str(k): "" if v is None else str(v) for k, v in record.items()}
        return
    delimiter = "\t" if suffix in (".tsv", ".tab") else ","
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
    while True:
        start = max(reader.line_num, 1) + 1  # where the next record begins (after the header)
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error as err:
            raise DataError(path, _csv_problem(err), row=reader.line_num + 1) from None
        if None in record:
            raise DataError(path, f"more fields than the header has ({len(reader.fieldnames)})",
                            row=reader.line_num)
        end = reader.line_num
        broken = next((k for k, v in record.items() if v and ("\n" in v or "\r" in v)), None)
        if broken is not None:
            until = "the end of the file" if end >= text.count("\n") else f"row {end}"
            raise DataError(path, f"a quote (\") opened in this field is not closed before {until}, "
                            f"so rows {start}-{end} were read as one value; close or remove the "
                            "quote", row=start, field=broken.strip())
        yield reader.line_num, {k.strip(): v or "" for k, v in record.items()}


def _csv_problem(err: csv.Error) -> str:
    if "field larger than field limit" in str(err):
        return (f"a value is longer than {csv.field_size_limit()} characters: an unclosed quote, "
                "or not a pair file?")
    return f"not readable as CSV/TSV ({err})"


def _detect_layout(path: Path, columns) -> str:
    for layout, required in _LAYOUTS.items():
        if all(c in columns for c in required):
            return layout
    raise DataError(
        path,
        "missing columns: expected WinoQueer (Gender_ID_x, sent_x, sent_y) or CrowS-Pairs "
        f"(sent_more, sent_less, stereo_antistereo, bias_type); found {sorted(columns)}",
        row=1,
    )


def _sentence_fields(layout: str) -> tuple[str, str]:
    return ("sent_x", "sent_y") if layout == WINOQUEER else ("sent_more", "sent_less")


def _parse_row(path: Path, row: int, ordinal: int, record: dict, layout: str, columns) -> Pair:
    """One record as a Pair; without an id column the id is the record's ordinal."""
    def value(field: str, required: bool = True) -> str:
        text = normalise_text(record.get(field, ""))
        if required and not text:
            raise DataError(path, "empty value", row=row, field=field)
        return text

    pair_id = next((value(c, False) for c in _ID_COLUMNS if c in columns and value(c, False)),
                   str(ordinal))
    category = value("category", False)
    first, second = _sentence_fields(layout)
    more, less = value(first), value(second)
    if layout == WINOQUEER:
        group = value("Gender_ID_x")
        counter = value("Gender_ID_y", False)
        direction = "stereo"
    else:
        group, counter = value("bias_type"), ""
        direction_field = next((c for c in _DIRECTION_COLUMNS if c in columns), None)
        direction = value(direction_field) if direction_field else "stereo"
        if direction not in ("stereo", "antistereo"):
            raise DataError(path, f"direction must be 'stereo' or 'antistereo', got {direction!r}",
                            row=row, field=direction_field)
    return Pair(
        pair_id=pair_id,
        sent_more=more,
        sent_less=less,
        group=canonical_group(group),
        counterfactual_group=canonical_group(counter) if counter else "",
        category=category,
        direction=direction,
        source_row=row,
    )


def row_columns(path: Path) -> dict[int, dict[str, str]]:
    """Every row's raw values by row number (what a split by a file's column reads)."""
    return {number: {k: normalise_text(v) for k, v in record.items()}
            for number, record in _rows(path, decode_utf8(path, path.read_bytes()))}
