"""Which folders a takedown works on: crawl stores and built corpora, found by what they hold.

Not by one bookkeeping file: a crawl store is found by its Mastodon posts, its sealed data
or its state; a built corpus by its split files, the temporary split files of a build that
was killed, or the statistics a takedown keeps while it rewrites the corpus. So a store whose
state.json was lost, and a corpus whose build was killed before stats.json, are found too.

Symbolic links to folders are followed (`corpora/raw` is often one), each real folder once,
however many links lead to it. A folder that cannot be read is named, never skipped in
silence. Split files that no queerbias build wrote (the shipped demo corpus: no statistics,
no build's lock or temporary files, no removal list) are no corpus of ours: a takedown
writes nothing there, but says so when they hold a line of the person.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from queerbias.corpus.builder import SPLITS
from queerbias.corpus.crawl_state import PENDING_STATS
from queerbias.crawl.folder import LOCK
from queerbias.crawl.mastodon.records import DOC_PREFIX
from queerbias.crawl.mastodon.store import POSTS, REID, STATE, StoreError, read_state
from queerbias.crawl.mastodon.tombstones import TOMBSTONES
from queerbias.errors import DataError

STATS = "stats.json"


@dataclass
class Found:
    """What lies in or under the folders a takedown was given."""

    stores: list[Path] = field(default_factory=list)
    corpora: list[Path] = field(default_factory=list)
    foreign: list[Path] = field(default_factory=list)  # split files no build of ours wrote
    unreadable: dict[Path, str] = field(default_factory=dict)  # folder -> why it could not be searched


def killed_build_files(folder: Path) -> list[Path]:
    """The temporary split files a killed `corpus build` left (its finished outputs never hold them)."""
    return sorted(p for split in SPLITS for p in Path(folder).glob(f".{split}.jsonl.*.tmp"))


def _holds_mastodon_posts(path: Path) -> bool:
    """Whether the first record of a JSONL file is a Mastodon post of ours (doc_id `mastodon:...`, an account);
    OSError when it cannot be read."""
    with open(path, "rb") as handle:
        for line in handle:
            if line.strip():
                try:
                    record = json.loads(line)
                except ValueError:
                    return False
                return isinstance(record, dict) and "account" in record \
                    and str(record.get("doc_id", "")).startswith(DOC_PREFIX)
    return False


def _is_store(folder: Path, files: list[str]) -> bool:
    if REID in files or (POSTS in files and _holds_mastodon_posts(folder / POSTS)):
        return True
    if STATE in files:
        try:
            return read_state(folder) is not None
        except StoreError:
            return False  # a news crawl's state, say
    return False


def _kind(folder: Path, files: list[str]) -> str | None:
    """"corpus", "foreign" (split files of no build of ours), "store" or None."""
    if any(f"{split}.jsonl" in files for split in SPLITS) or PENDING_STATS in files or killed_build_files(folder):
        built = {STATS, PENDING_STATS, LOCK, TOMBSTONES} & set(files) or killed_build_files(folder)
        return "corpus" if built else "foreign"
    return "store" if _is_store(folder, files) else None


def find_outputs(folders: list[Path]) -> Found:
    """Stores, corpora and foreign split files in or under `folders`, recognised by what they hold."""
    found, seen = Found(), set()

    def unreadable(err: OSError) -> None:
        found.unreadable[Path(err.filename)] = f"cannot be read ({err.strerror})"

    for folder in folders:
        if not Path(folder).is_dir():
            raise DataError(folder, "not a folder")
        for root, dirs, files in os.walk(folder, onerror=unreadable, followlinks=True):
            real = os.path.realpath(root)
            if real in seen:  # reached again through a link: done already
                dirs[:] = []
                continue
            seen.add(real)
            root = Path(root)
            try:
                kind = _kind(root, files)
            except OSError as err:
                found.unreadable[root] = f"cannot be read ({err.strerror})"
                continue
            if kind is not None:
                {"store": found.stores, "corpus": found.corpora, "foreign": found.foreign}[kind].append(root)
    for paths in (found.stores, found.corpora, found.foreign):
        paths.sort()
    return found
