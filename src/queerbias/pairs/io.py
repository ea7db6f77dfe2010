"""Read pair files (CSV, TSV, JSONL) in the WinoQueer and CrowS-Pairs column layouts.

Real files are messy (leading spaces in values, a misspelt direction column in
WinoQueer v0), so values are whitespace-normalised and NFC-normalised; anything
that cannot be scored is an error naming the file, row and field. A group cell may
name several groups, separated by `;` or `,` (a survey statement can target more than
one: `Pair.other_groups`).
"""

from __future__ import annotations

import hashlib
import logging
import unicodedata
from pathlib import Path

from queerbias import records
from queerbias.errors import DataError
from queerbias.fileio import decode_utf8, regular_file
from queerbias.pairs.sampling import as_sample, chosen_indices
from queerbias.pairs.schema import PREDICATE_KINDS, STEREOTYPE, Pair, PairSet, split_groups
from queerbias.text.labels import label_problem, sentence_problem
from queerbias.text.taxonomy import canonical_group

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
#: the column naming a pair's group(s) in each layout
_GROUP_COLUMNS = {WINOQUEER: "Gender_ID_x", CROWS: "bias_type", QUEERBIAS: "group"}
_DIRECTION_COLUMNS = ("stereo_antistereo", "stereo_antistero")  # the latter: WinoQueer v0
_ID_COLUMNS = ("pair_id", "id", "", "Unnamed: 0")
_POLICIES = ("error", "keep", "drop")


def normalise_text(value: str) -> str:
    """NFC, collapse runs of whitespace, strip; umlauts and ß stay as they are. (`str.split` splits
    at the characters `\\s` matches, so this is `re.sub(r"\\s+", " ", ...).strip()`, faster.)"""
    return " ".join(unicodedata.normalize("NFC", value).split())


def read_pairs(path: str | Path, name: str | None = None, duplicates: str = "error",
               identical: str = "error", layout: str = "auto", sample: int | None = None,
               seed: int = 0) -> PairSet:
    """Parse a pair file; the layout is recognised from its columns.

    `duplicates` decides what happens to rows that repeat another row in every
    field (or reuse a pair id), and `identical` to pairs whose two sentences are
    the same: an error (default), keep them (an identical pair always scores as a
    tie, as in the reference scripts), or drop them. Distinct rows whose sentences
    coincide (common in template sets) are kept and counted. `layout` (auto, winoqueer,
    crows-pairs) says which columns to read when a file has those of both.

    `sample`: only a seeded subset of that many pairs, the one `sampling.sample_pairs` takes
    from the whole set. Every row is still read as a record (so the count, duplicates and
    identical pairs are those of the file), but only the sampled rows are parsed into pairs
    and checked field by field: a sample of a million-row file costs one pass of the CSV
    reader, not a million parsed pairs.
    """
    for option, value in (("duplicates", duplicates), ("identical", identical)):
        if value not in _POLICIES:
            raise ValueError(f"{option} must be one of {_POLICIES}, got {value!r}")
    path = regular_file(path, "pair file")
    raw = path.read_bytes()
    text = decode_utf8(path, raw)
    first = next(iter(_rows(path, text)), None)
    if first is None:
        raise DataError(path, "the file holds no pairs")
    columns = first[1].keys()
    if layout not in ("auto", *_LAYOUTS):
        raise ValueError(f"layout must be auto or one of {tuple(_LAYOUTS)}, got {layout!r}")
    layout = _detect_layout(path, columns, layout)
    scan = _Scan(path, layout, columns, duplicates, identical, parse=sample is None)
    for ordinal, (row_number, record) in enumerate(_rows(path, text), start=1):
        scan.add(ordinal, row_number, record)
    meta = {
        "layout": layout,
        "file_sha256": hashlib.sha256(raw).hexdigest(),
        "rows": scan.rows,
        "repeated_sentence_pairs": scan.repeated,
        "dropped_duplicates": scan.dropped,
        "identical_pairs": scan.same,
        "identical_policy": identical,
        "duplicates_policy": duplicates,
    }
    if scan.repeated:
        log.info("%s: %d pairs repeat the sentences of an earlier pair", path, scan.repeated)
    if sample is None:
        return PairSet(name=name or path.stem, pairs=scan.pairs, source=str(path), meta=meta)
    chosen = chosen_indices(len(scan.kept), sample, seed)
    wanted = set(scan.kept) if chosen is None else {scan.kept[i] for i in chosen}
    pairs = []
    for ordinal, (row_number, record) in enumerate(_rows(path, text), start=1):
        if ordinal in wanted:
            pairs.append(scan.parsed(ordinal, row_number, record))
            if len(pairs) == len(wanted):
                break
    whole = PairSet(name=name or path.stem, pairs=pairs, source=str(path), meta=meta)
    return whole if chosen is None else as_sample(whole, pairs, sample, seed, of=len(scan.kept))


class _Scan:
    """One pass over a pair file's records: what every row decides (is it a duplicate or an
    identical pair, kept or dropped, does it repeat an earlier pair's sentences) from its raw
    values; with `parse`, each kept row also parsed into a `Pair` with every field checked.
    Identities are kept as 16-byte digests, so a million rows fit in memory."""

    def __init__(self, path: Path, layout: str, columns, duplicates: str, identical: str, parse: bool):
        self.path, self.layout, self.columns, self.parse = path, layout, columns, parse
        self.duplicates, self.identical = duplicates, identical
        self.has_id = any(c in columns for c in _ID_COLUMNS)
        self.first_seen: dict[bytes, int] = {}
        self.seen_texts: set[bytes] = set()
        self.renamed: set[int] = set()  # ordinals of kept duplicates, whose id gets their row
        self.kept: list[int] = []  # ordinals of the pairs, in order
        self.pairs: list[Pair] = []
        self.rows = self.repeated = self.dropped = self.same = 0

    def add(self, ordinal: int, row_number: int, record: dict) -> None:
        self.rows += 1
        pair = self.parsed(ordinal, row_number, record) if self.parse else None
        first, second = _sentence_fields(self.layout)
        if pair is not None:
            more, less = pair.sent_more, pair.sent_less
        else:
            more = normalise_text(records.text(record, first, self.path, row_number))
            less = normalise_text(records.text(record, second, self.path, row_number))
        if more == less:
            self.same += 1
            if self.identical == "error":
                raise DataError(self.path, "the two sentences are identical, so the pair measures "
                                "nothing (pass --identical keep or drop to accept it)",
                                row=row_number, field=f"{first}/{second}")
            if self.identical == "drop":
                return
        # A duplicate reuses a pair id or, without an id column, repeats a whole row.
        identity = _digest(pair.pair_id if pair else _pair_id(record, self.path, row_number, ordinal, self.columns)) \
            if self.has_id else _digest(sorted(record.items()))
        if identity in self.first_seen:
            if self.duplicates == "error":
                raise DataError(self.path, f"duplicate of row {self.first_seen[identity]} (pass "
                                "--duplicates keep or drop to accept it)", row=row_number,
                                field="pair_id" if self.has_id else None)
            if self.duplicates == "drop":
                self.dropped += 1
                return
            self.renamed.add(ordinal)
        self.first_seen.setdefault(identity, row_number)
        texts = _digest((more, less))
        self.repeated += texts in self.seen_texts
        self.seen_texts.add(texts)
        self.kept.append(ordinal)
        if pair is not None:
            self.pairs.append(_with_id(pair, f"{pair.pair_id}-r{row_number}") if ordinal in self.renamed else pair)

    def parsed(self, ordinal: int, row_number: int, record: dict) -> Pair:
        """The row as a `Pair`, every field checked; a kept duplicate's id names its row."""
        pair = _parse_row(self.path, row_number, ordinal, record, self.layout, self.columns)
        return _with_id(pair, f"{pair.pair_id}-r{row_number}") if ordinal in self.renamed else pair


def _digest(value) -> bytes:
    return hashlib.blake2b(repr(value).encode("utf-8", "surrogatepass"), digest_size=16).digest()


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

    def groups(field: str, required: bool = True) -> list[str]:
        """The canonical groups of a group cell, which may name several ("Lesbian; Non-binary")."""
        return [canonical_group(text) for text in split_groups(label(field, required))]

    pair_id = _pair_id(record, path, row, ordinal, columns)
    category = value("category", False)
    first, second = _sentence_fields(layout)
    more, less = sentence(first), sentence(second)
    # the group cell may name several groups; a run's pairs.csv names the further ones in other_groups
    targeted = list(dict.fromkeys([*groups(_GROUP_COLUMNS[layout]), *groups("other_groups", False)]))
    if not targeted:
        raise DataError(path, "no group label", row=row, field=_GROUP_COLUMNS[layout])
    if layout == WINOQUEER:
        counter = label("Gender_ID_y", False)
        direction = "stereo"
    else:
        counter = label("counterfactual_group", False) if layout == QUEERBIAS else ""
        direction_field = next((c for c in (*_DIRECTION_COLUMNS, "direction") if c in columns), None)
        direction = value(direction_field) if direction_field else "stereo"
        if direction not in ("stereo", "antistereo"):
            raise DataError(path, f"direction must be 'stereo' or 'antistereo', got {direction!r}",
                            row=row, field=direction_field)
    kind = value("predicate_kind", False) or STEREOTYPE
    if kind not in PREDICATE_KINDS:
        raise DataError(path, f"predicate_kind must be one of {', '.join(PREDICATE_KINDS)}, got {kind!r}", row=row,
                        field="predicate_kind")
    return Pair(
        pair_id=pair_id,
        sent_more=more,
        sent_less=less,
        group=targeted[0],
        other_groups=tuple(targeted[1:]),
        counterfactual_group=canonical_group(counter) if counter else "",
        category=category,
        direction=direction,
        frame=value("frame", False),
        predicate_kind=kind,
        phrase_end=_phrase_end(record, path, row, more),
        source_row=row,
    )


def _phrase_end(record: dict, path: Path, row: int, sent_more: str) -> int | None:
    """The optional `phrase_end` column: where the identity phrase ends in the stereotypical sentence,
    a character offset within it (empty: not known)."""
    raw = normalise_text(records.identifier(record, "phrase_end", path, row))
    if not raw:
        return None
    if not raw.isascii() or not raw.isdigit() or len(raw) > 6 or not 0 < int(raw) <= len(sent_more):
        raise DataError(path, f"phrase_end must be a character offset within the stereotypical sentence (1 to "
                        f"{len(sent_more)}), got {raw[:20]!r}", row=row, field="phrase_end")
    return int(raw)


def _pair_id(record: dict, path: Path, row: int, ordinal: int, columns) -> str:
    """The id column's value (the first of `_ID_COLUMNS` that has one), else the record's ordinal."""
    return next((text for c in _ID_COLUMNS if c in columns
                 and (text := normalise_text(records.identifier(record, c, path, row)))), str(ordinal))


def row_columns(path: Path) -> dict[int, dict[str, str]]:
    """Every row's raw values by row number (what a split by a file's column reads)."""
    return {number: {k: normalise_text("" if v is None else str(v)) for k, v in record.items()}
            for number, record in _rows(path, decode_utf8(path, path.read_bytes()))}
