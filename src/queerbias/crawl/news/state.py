"""Resumable crawl state: which feed items were already handled.

The state is rewritten atomically (temp file + os.replace) after the matching record
has been flushed to the output, so after a crash the state never claims an item
whose record was lost. The opposite gap (record written, state not yet) is closed
on start-up by also reading the identities of the records already in the output.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from queerbias.crawl.folder import PRIVATE_FILE
from queerbias.errors import DataError
from queerbias.fileio import atomic_write, read_text_utf8
from queerbias.records import loads_strict

STATE_VERSION = 1


class CrawlState:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.seen: set[str] = set()
        if self.path.exists():
            text = read_text_utf8(self.path, "crawl state")  # a regular file: open() on a FIFO waits for ever
            try:
                data = loads_strict(text)
                if isinstance(data, dict) and "instances" in data:
                    raise DataError(self.path, "belongs to a Mastodon crawl (queerbias crawl mastodon); "
                                               "give the news crawl its own --out folder")
                if data.get("version") != STATE_VERSION:
                    raise ValueError(f"unsupported state version {data.get('version')!r}")
                self.seen.update(data["seen"])
            except (ValueError, KeyError, TypeError, AttributeError) as err:
                raise DataError(self.path, f"unreadable crawl state ({err}); move it away "
                                           "to start afresh") from None

    def is_seen(self, keys: list[str]) -> bool:
        return any(key in self.seen for key in keys)

    def mark(self, keys: list[str]) -> None:
        self.seen.update(keys)

    def save(self) -> None:
        atomic_write(self.path, json.dumps({
            "version": STATE_VERSION,
            "updated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "seen": sorted(self.seen),
        }, ensure_ascii=False, indent=2) + "\n", permissions=PRIVATE_FILE)
