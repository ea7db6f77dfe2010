"""The common document schema every source writes (the news crawler, the Mastodon store through
`corpus.crawl_state`, the taz reader) and the corpus builder reads. It lives with the crawlers, below
the corpus, so that a crawler writes documents without importing the corpus that reads them.

One JSON object per line:

    doc_id      stable id, unique within its source ("taz:123", "news:3f2a...")
    source      where it came from ("taz", "news", "mastodon", or a manifest name)
    kind        "article", "post" or "text"; picks the builder's minimum length
    text        plain text (no HTML), paragraphs separated by blank lines
    title       headline, or null
    url         canonical link, or null
    published   ISO 8601 date or timestamp, or null
    language    declared language code, or null
    keywords    queer keywords that matched (why the document is in the corpus)
    provenance  free-form origin details (archive file and row, feed URL, fetched_at)
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from queerbias.errors import DataError

KINDS = ("article", "post", "text")


@dataclass
class Document:
    """One text of the corpus with enough metadata to trace and filter it."""

    doc_id: str
    source: str
    kind: str
    text: str
    title: str | None = None
    url: str | None = None
    published: str | None = None
    language: str | None = None
    keywords: list[str] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def addresses(self) -> list[str]:
        """Every address the document was found at: its `url` (a news article's canonical address) and the link
        its feed gave (`provenance`), so that an opt-out naming either reaches it."""
        link = self.provenance.get("link") if isinstance(self.provenance, dict) else None
        return [address for address in (self.url, link) if isinstance(address, str) and address]

    @classmethod
    def from_dict(cls, record: dict[str, Any], path: Path | str, row: int) -> Document:
        """Validate a parsed JSONL record; errors name the file, row and field."""
        for name in ("doc_id", "source", "kind", "text"):
            if not isinstance(record.get(name), str) or not record[name]:
                raise DataError(path, "missing or not a non-empty string", row=row, field=name)
        if record["kind"] not in KINDS:
            raise DataError(path, f"unknown kind {record['kind']!r}, expected one of {KINDS}",
                            row=row, field="kind")
        known = {name: record[name] for name in cls.__dataclass_fields__ if name in record}
        return cls(**known)


def stable_id(*parts: str) -> str:
    """A short id derived from content, identical on every run and machine."""
    return hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]
