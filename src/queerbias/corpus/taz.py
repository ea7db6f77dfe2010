"""Select queer-related articles from the taz2024full archive.

taz2024full (Urchs et al., 2025; Zenodo) holds 1.8M taz articles from 1980-2024 with
per-article keywords. It is read from local files, one file at a time, so the
archive never has to fit in memory:

    *.json / *.json.gz     a month file: a JSON array of article objects, an object
                           holding such an array (e.g. under "articles"), or an
                           object mapping article ids to article objects
    *.jsonl / *.jsonl.gz   one article object per line
    *.parquet              one article per row (read in record batches)

Field names are matched case-insensitively against these aliases (first wins):

    text       text, body, content, fulltext, article          required
    date       date, published, published_at, pubdate, publication_date, datetime
                                                                   required (ISO 8601,
               DD.MM.YYYY, or Unix seconds)
    title      title, headline, heading                            optional
    keywords   keywords, tags, keyword, topics, subjects           optional (list, or
               a string separated by "," ";" or "|")
    url        url, link, href                                     optional
    id         id, article_id, doc_id, uid                         optional

An article is kept when its year is in range and a queer keyword matches, first in
the archive's keyword metadata, else in title and text (same word-boundary matcher
as the Mastodon crawler).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from tqdm import tqdm

from queerbias.corpus.io import BadRecords
from queerbias.crawl.documents import Document, stable_id
from queerbias.errors import DataError
from queerbias.fileio import iter_jsonl, open_text
from queerbias.text.keywords import KeywordMatcher

ALIASES: dict[str, tuple[str, ...]] = {
    "text": ("text", "body", "content", "fulltext", "article"),
    "date": ("date", "published", "published_at", "pubdate", "publication_date", "datetime"),
    "title": ("title", "headline", "heading"),
    "keywords": ("keywords", "tags", "keyword", "topics", "subjects"),
    "url": ("url", "link", "href"),
    "id": ("id", "article_id", "doc_id", "uid"),
}
SUFFIXES = (".json", ".jsonl", ".parquet", ".json.gz", ".jsonl.gz")
ARCHIVE_YEARS_BACK = 6
_MONTH_FILE = re.compile(r"^(?:taz[_-]?)?((?:19|20)\d\d)(?:[_-]?(0[1-9]|1[0-2]))?$", re.IGNORECASE)
_KEYWORD_SEPARATORS = re.compile(r"[,;|]")


def default_since_year(today: date | None = None) -> int:
    """First year of "the last six years": the current year minus six."""
    return (today or date.today()).year - ARCHIVE_YEARS_BACK


def archive_files(paths: Iterable[Path]) -> list[Path]:
    """The archive files under `paths` (files or folders, searched recursively), sorted."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found.extend(p for p in sorted(path.rglob("*")) if p.is_file() and _is_archive(p))
        elif path.is_file():
            found.append(path)
        elif path.exists():
            raise DataError(path, "not a regular file or folder (a FIFO or device?); give archive files")
        else:
            raise DataError(path, "no such file or folder")
    if not found:
        raise DataError(", ".join(map(str, paths)), f"no archive files ({', '.join(SUFFIXES)})")
    return found


def _is_archive(path: Path) -> bool:
    return path.name.lower().endswith(SUFFIXES)


def _file_year(path: Path) -> int | None:
    """The year in a month/year file name such as 2021-03.json, else None."""
    stem = path.name.lower()
    for suffix in sorted(SUFFIXES, key=len, reverse=True):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    match = _MONTH_FILE.match(stem)
    return int(match.group(1)) if match else None


def iter_records(path: Path, bad: BadRecords) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(row, record)` from one archive file; row is 1-based within the file."""
    name = path.name.lower()
    if name.endswith((".jsonl", ".jsonl.gz")):
        yield from iter_jsonl(path, bad.handle)
    elif name.endswith(".parquet"):
        row = 0
        for batch in pq.ParquetFile(path).iter_batches(batch_size=2048):
            for record in batch.to_pylist():
                row += 1
                yield row, record
    else:
        yield from _iter_json_document(path, bad)


def _iter_json_document(path: Path, bad: BadRecords) -> Iterator[tuple[int, dict[str, Any]]]:
    with open_text(path) as handle:
        try:
            data = json.load(handle)
        except json.JSONDecodeError as err:
            raise DataError(path, f"invalid JSON: {err.msg} (line {err.lineno})") from None
    if isinstance(data, dict):
        lists = [value for value in data.values() if isinstance(value, list)]
        if len(lists) == 1:
            data = lists[0]
        elif data and all(isinstance(value, dict) for value in data.values()):
            data = [{"id": key, **value} for key, value in data.items()]
        else:
            raise DataError(path, "expected an array of articles, an object holding one "
                                  "array, or an object of id -> article")
    if not isinstance(data, list):
        raise DataError(path, f"expected an array of articles, got {type(data).__name__}")
    for row, record in enumerate(data, start=1):
        if not isinstance(record, dict):
            bad.handle(DataError(path, f"expected an article object, got {type(record).__name__}",
                                 row=row))
            continue
        yield row, record


def _field(record: dict[str, Any], name: str) -> tuple[str, Any]:
    """(actual key, value) for the first alias of `name` present and non-empty."""
    lowered = {key.lower(): key for key in record if isinstance(key, str)}
    for alias in ALIASES[name]:
        key = lowered.get(alias)
        if key is not None and record[key] not in (None, "", []):
            return key, record[key]
    return ALIASES[name][0], None


def parse_date(value: Any) -> datetime | date:
    """Date or timestamp from ISO 8601, DD.MM.YYYY, Unix seconds, or a parsed value."""
    if isinstance(value, (datetime, date)):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, tz=timezone.utc)
    if isinstance(value, str):
        text = value.strip()
        for parse in (date.fromisoformat, datetime.fromisoformat):
            try:
                return parse(text.replace("Z", "+00:00"))
            except ValueError:
                pass
        try:
            return datetime.strptime(text, "%d.%m.%Y").date()
        except ValueError:
            pass
    raise ValueError(f"unrecognised date {value!r}")


def _keyword_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in _KEYWORD_SEPARATORS.split(value) if part.strip()]
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return [item.strip() for item in value if item.strip()]
    raise ValueError(f"expected a list of strings or a separated string, got {value!r:.80}")


class TazReader:
    """Streams matching taz articles as `Document`s and counts what it skipped and why."""

    def __init__(self, matcher: KeywordMatcher, since_year: int, until_year: int | None = None,
                 bad: BadRecords | None = None):
        self.matcher, self.since_year, self.until_year = matcher, since_year, until_year
        self.bad = bad or BadRecords()
        self.counts: Counter[str] = Counter()

    def _in_range(self, year: int) -> bool:
        return year >= self.since_year and (self.until_year is None or year <= self.until_year)

    def read(self, paths: Iterable[Path]) -> Iterator[Document]:
        files = archive_files(paths)
        with tqdm(total=len(files), unit="file", desc="taz", leave=False) as progress:
            for path in files:
                year = _file_year(path)
                if year is not None and not self._in_range(year):
                    self.counts["files_skipped_by_name"] += 1
                else:
                    yield from self._read_file(path)
                progress.update()
                progress.set_postfix(kept=self.counts["kept"], refresh=False)

    def _read_file(self, path: Path) -> Iterator[Document]:
        for row, record in iter_records(path, self.bad):
            self.counts["read"] += 1
            try:
                document = self.to_document(record, path, row)
            except DataError as err:
                self.bad.handle(err)
                continue
            if document is not None:
                self.counts["kept"] += 1
                yield document

    def to_document(self, record: dict[str, Any], path: Path, row: int) -> Document | None:
        """The article as a Document, None if filtered out; DataError if unusable."""
        date_key, raw_date = _field(record, "date")
        if raw_date is None:
            raise DataError(path, "no publication date", row=row, field=date_key)
        try:
            published = parse_date(raw_date)
        except (ValueError, OverflowError, OSError) as err:
            raise DataError(path, str(err), row=row, field=date_key) from None
        if not self._in_range(published.year):
            self.counts["out_of_years"] += 1
            return None

        text_key, text = _field(record, "text")
        if not isinstance(text, str) or not text.strip():
            raise DataError(path, "missing or empty article text", row=row, field=text_key)
        keywords_key, raw_keywords = _field(record, "keywords")
        try:
            archive_keywords = _keyword_list(raw_keywords)
        except ValueError as err:
            raise DataError(path, str(err), row=row, field=keywords_key) from None
        title = _optional_str(record, "title", path, row)

        matched_on = "metadata"
        hits = self.matcher.find(" ; ".join(archive_keywords))
        if not hits:
            matched_on = "text"
            hits = self.matcher.find(f"{title or ''}\n{text}")
        if not hits:
            self.counts["no_keyword"] += 1
            return None

        url = _optional_str(record, "url", path, row)
        article_id = _optional_str(record, "id", path, row, coerce=True)
        doc_id = "taz:" + (article_id or stable_id(url or "", title or "", published.isoformat()))
        return Document(
            doc_id=doc_id, source="taz", kind="article", text=text.strip(), title=title,
            url=url, published=published.isoformat(), language="de",
            keywords=sorted(set(hits)),
            provenance={"archive_file": path.name, "row": row, "matched_on": matched_on,
                        "archive_keywords": archive_keywords},
        )


def _optional_str(record: dict[str, Any], name: str, path: Path, row: int,
                  coerce: bool = False) -> str | None:
    key, value = _field(record, name)
    if value is None:
        return None
    if coerce and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise DataError(path, f"expected a string, got {type(value).__name__}", row=row, field=key)
    return value.strip() or None
