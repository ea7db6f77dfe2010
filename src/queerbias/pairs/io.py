"""Read pair files (CSV, TSV, JSONL) in the WinoQueer and CrowS-Pairs column layouts.

Real files are messy (leading spaces in values, a misspelt direction column in
WinoQueer v0), so values are whitespace-normalised and NFC-normalised; anything
that cannot be scored is an error naming the file, row and field.
"""

from __future__ import annotations

import hashlib
import logging
import re
import unicodedata
from pathlib import Path

from queerbias import records
from queerbias.errors import DataError
from queerbias.fileio import decode_utf8, regular_file
from queerbias.pairs.schema import Pair, PairSet
from queerbias.pairs.taxonomy import canonical_group
from queerbias.text.labels import label_problem, sentence_problem

log = logging.getLogger(__name__)

WINOQUEER = "winoqueer"
CROWS = "crows-pairs"
#: our own column names (the shipped knowledge and neutral-mention sets, a run's pairs.csv)
QUEERBIAS = "queerbias"
_LAYOUTS = {
    WINOQUEER: ("Gender_ID_x", "sent_x", "sent_y"),
    CROWS: ("sent_more", "sent_less", "bias_type"),
    QUEERBIAS: ("sent_more", "sent_less", "group"),
}
_DIRECTION_COLUMNS = ("stereo_antistereo", "stereo_antistero")  # the latter: WinoQueer v0
_ID_COLUMNS = ("pair_id", "id", "", "Unnamed: 0")
_POLICIES = ("error", "keep", "drop")


def normalise_text(value: str) -> str:
    """NFC, collapse runs of whitespace, strip; umlauts and ß stay as they are."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", value)).strip()


def read_pairs(path: str | Path, name: str | None = None, duplicates: str = "error",
               identical: str = "error", layout: str = "auto") -> PairSet:
    """Parse a pair file; the layout is recognised from its columns.

    `duplicates` decides what happens to rows that repeat another row in every
    field (or reuse a pair id), and `identical` to pairs whose two sentences are
    the same: an error (default), keep them (an identical pair always scores as a
    tie, as in the reference scripts), or drop them. Distinct rows whose sentences
    coincide (common in template sets) are kept and counted. `layout` (auto, winoqueer,
    crows-pairs) says which columns to read when a file has those of both.
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
    if layout not in ("auto", *_LAYOUTS):
        raise ValueError(f"layout must be auto or one of {tuple(_LAYOUTS)}, got {layout!r}")
    layout = _detect_layout(path, columns, layout)
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
        identity = pair.pair_id if has_id else tuple(sorted((k, repr(v)) for k, v in record.items()))
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
    """Yield (row number as an editor shows it, record) through the strict record reader."""
    return records.read_records(path, text)


def _detect_layout(path: Path, columns, layout: str = "auto") -> str:
    """The layout the columns are in; a file with the columns of both is ambiguous (read as one,
    its sentences would be swapped and its groups wrong) unless `layout` says which."""
    found = [name for name, required in _LAYOUTS.items() if all(c in columns for c in required)]
    if layout != "auto":
        if layout not in found:
            raise DataError(path, f"--layout {layout}: the file lacks its columns "
                            f"({', '.join(_LAYOUTS[layout])}); found {sorted(columns)}", row=1)
        return layout
    if len(found) > 1:
        both = " and ".join(f"{name} ({', '.join(_LAYOUTS[name])})" for name in found)
        raise DataError(path, f"the file has the columns of several layouts, {both}, so which sentence is the "
                        "stereotypical one, or which column the group, is ambiguous; remove one set or pass "
                        f"--layout {' or --layout '.join(found)}", row=1)
    if found:
        return found[0]
    raise DataError(
        path,
        "missing columns: expected WinoQueer (Gender_ID_x, sent_x, sent_y), CrowS-Pairs "
        "(sent_more, sent_less, stereo_antistereo, bias_type) or queerbias (sent_more, sent_less, group); "
        f"found {sorted(columns)}",
        row=1,
    )


def _sentence_fields(layout: str) -> tuple[str, str]:
    return ("sent_x", "sent_y") if layout == WINOQUEER else ("sent_more", "sent_less")


def _parse_row(path: Path, row: int, ordinal: int, record: dict, layout: str, columns) -> Pair:
    """One record as a Pair; without an id column the id is the record's ordinal."""
    def value(field: str, required: bool = True, read=records.text) -> str:
        text = normalise_text(read(record, field, path, row))
        if required and not text:
            raise DataError(path, "empty value", row=row, field=field)
        return text

    def sentence(field: str) -> str:
        text = value(field)
        problem = sentence_problem(text)
        if problem:
            raise DataError(path, f"the sentence {problem}", row=row, field=field)
        return text

    def label(field: str, required: bool = True) -> str:
        text, problem = label_problem(value(field, required))
        if problem:
            raise DataError(path, f"the group label {problem}", row=row, field=field)
        return text

    pair_id = next((value(c, False, records.identifier) for c in _ID_COLUMNS
                    if c in columns and value(c, False, records.identifier)), str(ordinal))
    category = value("category", False)
    first, second = _sentence_fields(layout)
    more, less = sentence(first), sentence(second)
    if layout == WINOQUEER:
        group = label("Gender_ID_x")
        counter = label("Gender_ID_y", False)
        direction = "stereo"
    else:
        if layout == QUEERBIAS:
            group, counter = label("group"), label("counterfactual_group", False)
        else:
            group, counter = label("bias_type"), ""
        direction_field = next((c for c in (*_DIRECTION_COLUMNS, "direction") if c in columns), None)
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
    return {number: {k: normalise_text("" if v is None else str(v)) for k, v in record.items()}
            for number, record in _rows(path, decode_utf8(path, path.read_bytes()))}


def load_pairs(spec: str | Path, duplicates: str = "error", identical: str = "error",
               layout: str = "auto") -> PairSet:
    """A registered benchmark name (downloaded/generated as needed), a file path, or one
    side of a held-out split of either (`queerbias-de:test`, see `pairs.splits`)."""
    from queerbias.pairs.registry import resolve_pairs
    from queerbias.pairs.splits import load_split, parse_split

    split = None if Path(str(spec)).is_file() else parse_split(str(spec))
    if split is not None:
        return load_split(split, str(spec), duplicates=duplicates, identical=identical, layout=layout)
    resolved = resolve_pairs(str(spec))
    if isinstance(resolved, PairSet):
        return resolved
    name = str(spec) if not Path(str(spec)).exists() else None
    return read_pairs(resolved, name=name, duplicates=duplicates, identical=identical, layout=layout)
