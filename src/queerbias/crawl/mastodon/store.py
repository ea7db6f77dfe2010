"""The crawl's output folder: posts.jsonl, state.json, stats.json, and crash-safe resume.

posts.jsonl is append-only. Each page is committed in two steps: its records are
appended, flushed and fsynced, then state.json (cursors, statistics and the number
of committed records) is replaced atomically. On start, posts.jsonl is cut back to
the committed number of lines, so a crash between the two steps, or in the middle
of a line, leaves nothing behind that the resumed crawl would write again.
Cross-instance sightings of an already kept post are kept in state.json and
merged into the records' `seen_on` by `finalize`, which rewrites posts.jsonl
without changing its line count, so the commit count stays valid.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
from collections import Counter
from pathlib import Path

from queerbias.fileio import atomic_write

STATE_VERSION = 1
POSTS, STATE, STATS, SALT = "posts.jsonl", "state.json", "stats.json", "pseudonym.salt"


def _json_bytes(obj) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode()


def new_instance_stats() -> dict:
    return {"requests": 0, "fetched": 0, "kept": 0, "dropped": {}, "duplicates": 0, "words": 0, "bytes": 0}


class Pseudonymiser:
    """Salted HMAC of account handles: stable across runs of one output folder, not reversible without the salt."""

    def __init__(self, salt_file: Path):
        if not salt_file.exists():
            atomic_write(salt_file, secrets.token_hex(32).encode(), permissions=0o600)
        self._key = salt_file.read_bytes().strip()

    def __call__(self, value: str) -> str:
        return hmac.new(self._key, value.lower().encode(), hashlib.sha256).hexdigest()[:24]


class CrawlStore:
    """Thread-safe owner of one output folder; every write goes through `commit`."""

    def __init__(self, out_dir: Path):
        self.dir = Path(out_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.state = self._load_state()
        self._seen_on: dict[str, list[str]] = self._recover_posts()
        self._posts = open(self.dir / POSTS, "ab")

    def _load_state(self) -> dict:
        path = self.dir / STATE
        if not path.exists():
            return {"version": STATE_VERSION, "records": 0, "instances": {}, "sightings": {}, "duplicates": 0}
        state = json.loads(path.read_text(encoding="utf-8"))
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"{path}: unsupported state version {state.get('version')!r}")
        return state

    def _recover_posts(self) -> dict[str, list[str]]:
        """Cut posts.jsonl back to the committed records; return uri -> seen_on of those records."""
        path, committed = self.dir / POSTS, self.state["records"]
        seen_on: dict[str, list[str]] = {}
        if not path.exists():
            if committed:
                raise ValueError(f"{path} is missing but {STATE} records {committed} posts")
            return seen_on
        keep_bytes = 0
        with open(path, "rb") as handle:
            for _ in range(committed):
                line = handle.readline()
                if not line.endswith(b"\n"):
                    raise ValueError(f"{path} has fewer posts than the {committed} that {STATE} records")
                record = json.loads(line)
                seen_on[record["uri"]] = self.state["sightings"].get(record["uri"], record["seen_on"])
                keep_bytes += len(line)
        if path.stat().st_size != keep_bytes:
            with open(path, "r+b") as handle:
                handle.truncate(keep_bytes)
                handle.flush()
                os.fsync(handle.fileno())
        return seen_on

    def _instance(self, instance: str) -> dict:
        return self.state["instances"].setdefault(
            instance, {"cursors": {}, "stats": new_instance_stats(), "probe": None, "feeds": {}, "status": None})

    def cursor(self, instance: str, feed: str) -> dict:
        """A copy of the saved paging cursor of one feed ({} before its first page)."""
        with self._lock:
            return dict(self._instance(instance)["cursors"].get(feed) or {})

    def commit(self, instance: str, seen_as: str, records: list[dict], *, feed: str | None = None,
               cursor: dict | None = None, stats: Counter | None = None, dropped: Counter | None = None,
               **report) -> None:
        """Append new `records`, count known ones as sightings, then save cursor, stats and `report` atomically.

        `seen_as` names the instance in `seen_on`; `report` may set `probe`, `status` or a feed's `feeds` entry.
        """
        with self._lock:
            inst = self._instance(instance)
            totals = inst["stats"]
            lines = []
            for record in records:
                uri = record["uri"]
                if uri in self._seen_on:
                    totals["duplicates"] += 1
                    self.state["duplicates"] += 1
                    if seen_as not in self._seen_on[uri]:
                        self._seen_on[uri].append(seen_as)
                        self.state["sightings"][uri] = self._seen_on[uri]
                    continue
                record["seen_on"] = [seen_as]
                self._seen_on[uri] = record["seen_on"]
                lines.append(json.dumps(record, ensure_ascii=False) + "\n")
                totals["kept"] += 1
                totals["words"] += len(record["text"].split())
                totals["bytes"] += len(record["text"].encode())
            if lines:
                self._posts.write("".join(lines).encode())
                self._posts.flush()
                os.fsync(self._posts.fileno())
                self.state["records"] += len(lines)
            for key, value in (stats or {}).items():
                totals[key] += value
            for reason, count in (dropped or {}).items():
                totals["dropped"][reason] = totals["dropped"].get(reason, 0) + count
            if feed is not None and cursor is not None:
                inst["cursors"][feed] = cursor
            for key, value in report.items():
                if key == "feeds":
                    inst["feeds"].update(value)
                else:
                    inst[key] = value
            atomic_write(self.dir / STATE, _json_bytes(self.state))
            atomic_write(self.dir / STATS, _json_bytes(self.stats()))

    def stats(self) -> dict:
        """The content of stats.json: per-instance totals over all runs into this folder."""
        per_instance = {
            url: {**inst["stats"], "status": inst["status"], "feeds": inst["feeds"], "probe": inst["probe"]}
            for url, inst in sorted(self.state["instances"].items())
        }
        return {"posts": self.state["records"], "duplicates": self.state["duplicates"],
                "instances": per_instance}

    def finalize(self) -> None:
        """Merge recorded cross-instance sightings into posts.jsonl's `seen_on`; same lines, same order."""
        with self._lock:
            self._posts.close()
            sightings = self.state["sightings"]
            path = self.dir / POSTS
            if sightings:
                out = []
                with open(path, "rb") as handle:
                    for line in handle:
                        record = json.loads(line)
                        if record["uri"] in sightings:
                            record["seen_on"] = sightings[record["uri"]]
                            line = (json.dumps(record, ensure_ascii=False) + "\n").encode()
                        out.append(line)
                atomic_write(path, b"".join(out))
            self._posts = open(path, "ab")

    def close(self) -> None:
        with self._lock:
            self._posts.close()
