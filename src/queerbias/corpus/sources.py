"""Inputs of a corpus build, read as `Document`s whatever format they come in.

A JSONL source may mix three record shapes, recognised line by line:

    our document schema   has "source" and "kind" (output of `corpus taz`, `crawl news`)
    Mastodon post         has "seen_on" (posts.jsonl of `crawl mastodon`): keyed pseudonyms for the
                          post (doc_id) and its author (account), no uri or url
    any other object      needs only "text"; "doc_id"/"id" and "kind" are used if present

A source of format "taz" is instead the raw taz2024full archive, filtered on the fly.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from queerbias.corpus.io import BadRecords
from queerbias.corpus.taz import TazReader, default_since_year
from queerbias.crawl.documents import KINDS, Document, stable_id
from queerbias.errors import DataError
from queerbias.fileio import iter_jsonl
from queerbias.text.keywords import DEFAULT_KEYWORDS, KeywordMatcher

FORMATS = ("jsonl", "taz")


@dataclass
class SourceSpec:
    """One input of a build: where it is, what to call it, and what may be done with it."""

    path: Path
    name: str | None = None  # overrides the records' own source name in outputs and stats
    format: str = "jsonl"
    licence: str = "unknown: check before sharing the corpus"
    description: str = ""
    options: dict[str, Any] = field(default_factory=dict)  # format-specific (taz: since_year...)

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        if self.format not in FORMATS:
            raise ValueError(f"unknown source format {self.format!r}, expected one of {FORMATS}")

    @property
    def label(self) -> str:
        return self.name or self.path.stem


def record_to_document(record: dict[str, Any], path: Path, row: int, name: str) -> Document:
    """Map one parsed JSONL record of any supported shape to a Document."""
    if "source" in record and "kind" in record:
        return Document.from_dict(record, path, row)
    text = record.get("text")
    if not isinstance(text, str) or not text.strip():
        raise DataError(path, "missing or empty text", row=row, field="text")
    if "origin_instance" in record or "seen_on" in record:
        if "uri" in record or "url" in record or "origin_instance" in record:
            raise DataError(path, "a Mastodon post of an older queerbias that names its author (uri, url); "
                                  "crawl afresh with `queerbias crawl mastodon`", row=row)
        doc_id, account = record.get("doc_id"), record.get("account")
        if not isinstance(doc_id, str) or not doc_id:
            raise DataError(path, "Mastodon post without a doc_id", row=row, field="doc_id")
        if not isinstance(account, str) or not account:
            raise DataError(path, "Mastodon post without an account pseudonym", row=row, field="account")
        return Document(
            doc_id=doc_id, source="mastodon", kind="post", text=text, published=record.get("created_at"),
            language=record.get("language"), keywords=list(record.get("keywords") or []),
            provenance={"account": account},
        )
    raw_id = record.get("doc_id", record.get("id"))
    doc_id = str(raw_id) if isinstance(raw_id, (str, int)) and raw_id != "" else stable_id(text)
    kind = record.get("kind") if record.get("kind") in KINDS else "text"
    return Document(doc_id=doc_id, source=name, kind=kind, text=text,
                    title=_text_or_none(record, "title"), url=_text_or_none(record, "url"),
                    published=_text_or_none(record, "published") or _text_or_none(record, "date"),
                    language=_text_or_none(record, "language"))


def _text_or_none(record: dict[str, Any], key: str) -> str | None:
    """Optional metadata of free-form JSONL: used when it is a string, ignored otherwise."""
    value = record.get(key)
    return value if isinstance(value, str) and value else None


def iter_source(spec: SourceSpec, bad: BadRecords) -> Iterator[Document]:
    """Documents of one source, renamed to `spec.name` when it is set."""
    if spec.format == "taz":
        reader = TazReader(
            KeywordMatcher(spec.options.get("keywords", DEFAULT_KEYWORDS)),
            since_year=int(spec.options.get("since_year", default_since_year())),
            until_year=spec.options.get("until_year"),
            bad=bad,
        )
        documents = reader.read([spec.path])
    else:
        documents = _iter_jsonl_documents(spec, bad)
    for document in documents:
        if spec.name:
            document.source = spec.name
        yield document


def _iter_jsonl_documents(spec: SourceSpec, bad: BadRecords) -> Iterator[Document]:
    try:
        for row, record in iter_jsonl(spec.path, bad.handle):
            try:
                document = record_to_document(record, spec.path, row, spec.label)
            except DataError as err:
                bad.handle(err)
                continue
            yield document
    except UnicodeDecodeError:
        raise DataError(spec.path, "not UTF-8 text (a binary file?); a source must be JSONL") from None
    except (OSError, EOFError) as err:  # a damaged or fake .gz
        raise DataError(spec.path, f"cannot read: {err}") from None
