"""Build a training corpus: merge sources, filter, deduplicate, split, describe.

Each document passes these filters in order; the first that fails names the drop
reason in stats.json:

    opted_out         its doc_id or URL is on the opt-out list (a URL prefix covers the pages
                      below it, at a path boundary), or it or its author is on the removal
                      list of a crawl store or of the output folder (`corpus.crawl_state`)
    too_short         fewer words than the minimum for its kind (MIN_WORDS)
    exact_duplicate   same normalised text as a document kept earlier
    not_german        `queerbias.text.language.is_german` says no
    near_duplicate    estimated Jaccard similarity of word shingles with a kept
                      document at or above the threshold

Earlier sources win duplicates, so list the source you trust most first.
Kept documents go to validation when a seeded hash of their doc_id falls below
the validation fraction, so a rerun (or a rerun with more data) keeps each
document on its side of the split.

Texts are scrubbed of personal data first (mentions, e-mail addresses, handles and
phone numbers become placeholders, invisible characters go; `queerbias.text.scrub`).
A Mastodon source must come with its crawl state, checked within `max_crawl_age_days`
(see `corpus.crawl_state`), unless `allow_stale` is set; the state is recorded with the
inputs in stats.json.

Outputs are written to temporary files and renamed into place at the end; stats.json
is written last, so a folder without stats.json holds no finished build. The output
folder is private (0700, files 0600): a corpus of posts is personal data. A takedown may
run while a build reads its sources: just before renaming its outputs, the build takes
the lock of every crawl store it read (waiting for a crawl, refresh or forget there to
finish), reads their removal lists again and takes out whatever they gained meanwhile.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from queerbias import killpoint
from queerbias.corpus.crawl_state import MAX_CRAWL_AGE_DAYS, PENDING_STATS, CrawlSource, Removals
from queerbias.corpus.datasheet import render_datasheet
from queerbias.corpus.dedupe import NearDuplicateIndex, content_hash
from queerbias.corpus.io import BadRecords
from queerbias.corpus.sources import SourceSpec, iter_source
from queerbias.crawl.canonical import canonical_url
from queerbias.crawl.documents import Document
from queerbias.crawl.folder import PRIVATE_FILE, FolderLock, make_private_dir
from queerbias.crawl.inputs import read_small_text
from queerbias.crawl.mastodon.tombstones import Tombstones
from queerbias.errors import DataError, QueerbiasError
from queerbias.fileio import atomic_open, atomic_write, dumps_line
from queerbias.outputs import CORPUS, output_path
from queerbias.progress import bar
from queerbias.text.language import is_german
from queerbias.text.scrub import scrub_personal_data

log = logging.getLogger(__name__)

# Minimum words per document kind. Posts are short by nature (the seed study kept
# toots of a sentence or two); articles under 50 words are teasers or photo
# captions; other text is in between.
MIN_WORDS = {"post": 5, "article": 50, "text": 20}
DROP_REASONS = ("opted_out", "too_short", "exact_duplicate", "not_german", "near_duplicate")
SPLITS = ("train", "validation")


@dataclass
class BuildConfig:
    """Everything a build depends on; a manifest or the CLI fills it in."""

    name: str
    output_dir: Path
    sources: list[SourceSpec]
    validation_fraction: float = 0.05
    seed: int = 0
    min_words: dict[str, int] = field(default_factory=lambda: dict(MIN_WORDS))
    require_german: bool = True
    near_duplicate_threshold: float | None = 0.8
    shingle_size: int = 5
    num_perm: int = 128
    opt_out: Path | None = None
    skip_bad: bool = False
    max_crawl_age_days: float = MAX_CRAWL_AGE_DAYS
    allow_stale: bool = False
    description: str = ""
    intended_use: str = ""
    maintainer: str = ""
    key_file: Path | None = None  # the crawl key that opens removal lists (default: the crawler's)

    def __post_init__(self) -> None:
        self.min_words = {**MIN_WORDS, **self.min_words}
        self.validate()

    def validate(self) -> None:
        """Check the settings; call again after changing fields."""
        self.output_dir = Path(self.output_dir)
        if not self.sources:
            raise QueerbiasError("a corpus build needs at least one source")
        if not 0.0 <= self.validation_fraction < 1.0:
            raise QueerbiasError(
                f"validation fraction must be in [0, 1), got {self.validation_fraction}")
        threshold = self.near_duplicate_threshold
        if threshold is not None and not 0.0 < threshold <= 1.0:
            raise QueerbiasError(f"near-duplicate threshold must be in (0, 1], got {threshold}")
        if not self.max_crawl_age_days > 0:
            raise QueerbiasError(f"the maximum crawl age must be positive, got {self.max_crawl_age_days}")
        unknown = set(self.min_words) - set(MIN_WORDS)
        if unknown:
            raise QueerbiasError(f"min_words for unknown kinds {sorted(unknown)}; "
                                 f"kinds are {list(MIN_WORDS)}")


def is_validation(doc_id: str, seed: int, fraction: float) -> bool:
    """Seeded, order-independent split decision for one document."""
    digest = hashlib.blake2b(f"{seed}\x1f{doc_id}".encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64 < fraction


#: what writes a source of each format, for the hint when a source is missing
SOURCE_WRITERS = {
    "jsonl": "a JSONL of documents, as `queerbias crawl mastodon --out DIR` (DIR/posts.jsonl), `queerbias crawl "
             "news` or `queerbias corpus taz` write it",
    "taz": "the folder of the taz2024full archive's month files (Zenodo)",
}


def require_inputs(config: BuildConfig) -> None:
    """Refuse, before anything is read or written, an opt-out list or a source that is not there, each in
    one line saying what to create. A missing opt-out list is never read as an empty one: the list a
    manifest or `--opt-out` names is what keeps articles out, and a mistyped path would let them in."""
    if config.opt_out is not None and not os.path.lexists(config.opt_out):
        raise DataError(config.opt_out, "cannot read opt-out list: no such file; create it before building (an "
                        f"empty file leaves nothing out: touch {config.opt_out}; one doc_id, URL or URL prefix per "
                        "line), or name no opt_out in the manifest (docs/corpus.md)")
    for spec in config.sources:
        if not os.path.lexists(spec.path):
            raise DataError(spec.path, f"source {spec.label}: no such file or folder; write it before building: "
                            f"{SOURCE_WRITERS[spec.format]} (docs/corpus.md), or leave the source out")


def load_opt_out(path: Path) -> tuple[frozenset[str], tuple[str, ...]]:
    """(doc_ids, URL prefixes in the canonical form) from a file with one entry per line; '#' starts a comment."""
    lines = read_small_text(Path(path), "opt-out list").splitlines()
    entries = [line.split("#", 1)[0].strip() for line in lines]
    entries = [entry for entry in entries if entry]
    urls = tuple(canonical_url(entry) for entry in entries if entry.lower().startswith(("http://", "https://")))
    return frozenset(e for e in entries if not e.lower().startswith(("http://", "https://"))), urls


def url_opted_out(url: str, prefixes: tuple[str, ...]) -> bool:
    """Whether `url` is a listed URL or lies below one: `https://x/@alice` covers `https://x/@alice/1`
    but not `https://x/@alice2`. Both compare in the canonical form (`crawl.canonical`: host in any spelling,
    tracking parameters dropped)."""
    url = canonical_url(url)
    for prefix in prefixes:
        if url == prefix or (url.startswith(prefix) and (prefix.endswith("/") or url[len(prefix)] in "/?#")):
            return True
    return False


@dataclass
class _Tally:
    """Documents, words and UTF-8 bytes of kept text."""

    documents: int = 0
    words: int = 0
    bytes: int = 0

    def add(self, words: int, size: int) -> None:
        self.documents += 1
        self.words += words
        self.bytes += size

    def remove(self, words: int, size: int) -> None:
        self.documents -= 1
        self.words -= words
        self.bytes -= size

    def as_dict(self) -> dict[str, Any]:
        return {"documents": self.documents, "words": self.words,
                "mb": round(self.bytes / 1_000_000, 3)}


@dataclass(frozen=True)
class _KeptPost:
    """What a build remembers of a kept Mastodon post, to take it out again if a takedown lists it late."""

    account: str
    source: str
    split: str
    words: int
    size: int


class _SplitFiles:
    """The split files of one build: hidden temporary files beside their final names (`.train.jsonl.*.tmp`, as
    `corpus forget` recognises them), renamed into place by `commit`, deleted by `discard`."""

    def __init__(self, out: Path):
        self.out, self.temp, self.handles = out, {}, {}
        for split in SPLITS:
            fd, name = tempfile.mkstemp(prefix=f".{split}.jsonl.", suffix=".tmp", dir=out)
            os.fchmod(fd, PRIVATE_FILE)
            self.temp[split], self.handles[split] = Path(name), os.fdopen(fd, "w", encoding="utf-8")

    def write(self, split: str, line: str) -> None:
        self.handles[split].write(line)

    def drop(self, doc_ids: set[str]) -> None:
        """Rewrite the temporary files without the lines of `doc_ids`."""
        for split, handle in self.handles.items():
            handle.close()
            with open(self.temp[split], encoding="utf-8") as lines, \
                    atomic_open(self.temp[split], permissions=PRIVATE_FILE) as out:
                out.writelines(line for line in lines if json.loads(line)["doc_id"] not in doc_ids)
            self.handles[split] = open(self.temp[split], "a", encoding="utf-8")

    def commit(self) -> None:
        for split, handle in self.handles.items():
            handle.flush()
            os.fsync(handle.fileno())
            handle.close()
            os.replace(self.temp[split], self.out / f"{split}.jsonl")
        directory = os.open(self.out, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
        self.temp = {}

    def discard(self) -> None:
        for split, handle in self.handles.items():
            handle.close()
            if split in self.temp:
                self.temp[split].unlink(missing_ok=True)


class CorpusBuilder:
    """Runs one build described by a BuildConfig."""

    def __init__(self, config: BuildConfig, now: datetime | None = None):
        require_inputs(config)
        self.config = config
        self.now = now or datetime.now(timezone.utc)
        self.removed = Removals(config.key_file)
        self.output_list: Tombstones | None = None  # the removal list `corpus forget` left in the output folder
        self.opt_out_ids, self.opt_out_urls = (
            load_opt_out(config.opt_out) if config.opt_out else (frozenset(), ()))
        self.near = (NearDuplicateIndex(config.near_duplicate_threshold, config.num_perm,
                                        config.shingle_size, seed=config.seed)
                     if config.near_duplicate_threshold else None)
        self.seen_hashes: set[bytes] = set()
        self.dropped: Counter[str] = Counter()
        self.per_source: dict[str, dict[str, Any]] = {}
        self.inputs: list[dict[str, Any]] = []
        self.splits = {split: _Tally() for split in SPLITS}
        self.kept_posts: dict[str, _KeptPost] = {}
        self.removed_while_building = 0

    def drop_reason(self, document: Document, words: int) -> str | None:
        """The first filter `document` fails, or None to keep it."""
        if document.doc_id in self.opt_out_ids or self.removed.covers(document) \
                or any(url_opted_out(address, self.opt_out_urls) for address in document.addresses()):
            return "opted_out"
        if words < self.config.min_words[document.kind]:
            return "too_short"
        digest = content_hash(document.text)
        if digest in self.seen_hashes:
            return "exact_duplicate"
        self.seen_hashes.add(digest)
        if self.config.require_german and not is_german(document.text, document.language):
            return "not_german"
        key = f"{document.source}\x1f{document.doc_id}"
        if self.near is not None and self.near.add(key, document.text) is not None:
            return "near_duplicate"
        return None

    def _source_stats(self, source: str) -> dict[str, Any]:
        return self.per_source.setdefault(source, {
            "read": 0, "kept": _Tally(), "dropped": Counter(),
            "first_published": None, "last_published": None})

    def _crawl_source(self, spec: SourceSpec) -> CrawlSource | None:
        """The crawl state of a Mastodon source, checked for freshness; what its removal list holds is dropped."""
        crawl = CrawlSource.beside(spec.path, self.removed.key) if spec.format == "jsonl" else None
        if crawl is not None:
            if not self.config.allow_stale:
                crawl.require_fresh(self.now, self.config.max_crawl_age_days)
            self.removed.add(crawl.tombstones)
        return crawl

    def run(self) -> dict[str, Any]:
        """Build the corpus; returns the statistics also written to stats.json."""
        out = make_private_dir(output_path(  # a source inside it would be rewritten while read
            self.config.output_dir, [spec.path for spec in self.config.sources] + [self.config.opt_out,
                                                                                   self.config.key_file],
            option="corpus output folder", kind=CORPUS))
        lock = FolderLock(out, "build")
        try:
            return self._build(out)
        finally:
            lock.release()

    def _build(self, out: Path) -> dict[str, Any]:
        started = datetime.now(timezone.utc)
        self.output_list = self.removed.add_folder(out)
        crawls = {id(spec): self._crawl_source(spec) for spec in self.config.sources}
        splits = _SplitFiles(out)
        locks: list[FolderLock] = []
        try:
            with bar(unit="doc", desc=f"build {self.config.name}") as progress:
                for spec in self.config.sources:
                    self._read_source(spec, crawls[id(spec)], splits, progress)
            killpoint.reached("sources-read")
            locks = self._lock_and_reread(out, [c for c in crawls.values() if c is not None], splits)
            # From here the old build is replaced; its stats.json goes first so the
            # folder never pairs new splits with old statistics.
            (out / "stats.json").unlink(missing_ok=True)
            (out / PENDING_STATS).unlink(missing_ok=True)  # an interrupted takedown's copy of the old statistics
            splits.commit()
            killpoint.reached("renamed")
            stats = self._stats(started)
            write_outputs_summary(out, stats)
            return stats
        finally:
            splits.discard()
            for lock in locks:
                lock.release()

    def _read_source(self, spec: SourceSpec, crawl: CrawlSource | None, splits: _SplitFiles, progress) -> None:
        bad = BadRecords(skip=self.config.skip_bad)
        read = 0
        for document in iter_source(spec, bad):
            if crawl is None and "account" in document.provenance and not self.config.allow_stale:
                raise QueerbiasError(
                    f"{spec.path} holds Mastodon posts but no crawl state (state.json) lies beside it, so "
                    "nothing shows that deletions and opt-outs were honoured; build from the crawl's "
                    "folder, or pass --allow-stale")
            self._consider(document, splits)
            read += 1
            progress.update()
        if bad.count:
            log.warning("%s: skipped %d bad records, e.g. %s", spec.path, bad.count, bad.examples[0])
        self.inputs.append({
            "path": str(spec.path), "name": spec.label, "format": spec.format,
            "licence": spec.licence, "description": spec.description,
            "documents_read": read, "bad_records": bad.count,
            "crawl_state": crawl.as_dict() if crawl else None})

    def _lock_and_reread(self, out: Path, crawls: list[CrawlSource], splits: _SplitFiles) -> list[FolderLock]:
        """Take the lock of every crawl store read (waiting for a crawl, refresh or forget there to finish), read
        their removal lists and the output folder's again, and take out the posts a takedown listed while the
        build ran. Returns the locks, held until the outputs are in place."""
        locks: list[FolderLock] = []
        try:
            late = Removals(self.config.key_file)
            for folder in dict.fromkeys(crawl.folder.resolve() for crawl in crawls):  # a store read twice: one lock
                locks.append(FolderLock(folder, "build", wait=True))
                again = CrawlSource.beside(folder / "posts.jsonl", self.removed.key)
                if again is not None:
                    late.add(again.tombstones)
            self.output_list = late.add_folder(out)
            gone = {doc_id for doc_id, post in self.kept_posts.items() if late.covers_post(doc_id, post.account)}
            if gone:
                splits.drop(gone)
                for doc_id in gone:
                    self._take_out(self.kept_posts.pop(doc_id))
            return locks
        except BaseException:
            for lock in locks:
                lock.release()
            raise

    def _take_out(self, post: _KeptPost) -> None:
        """Count a post that a takedown removed after it was written as dropped; its source's first and last
        publication dates are withheld, as after `corpus forget`, since they may have been the person's."""
        source = self.per_source[post.source]
        source["kept"].remove(post.words, post.size)
        self.splits[post.split].remove(post.words, post.size)
        source["dropped"]["opted_out"] += 1
        self.dropped["opted_out"] += 1
        source["first_published"] = source["last_published"] = None
        self.removed_while_building += 1

    def _consider(self, document: Document, splits: _SplitFiles) -> None:
        source = self._source_stats(document.source)
        source["read"] += 1
        document.text = scrub_personal_data(document.text)
        words = len(document.text.split())
        reason = self.drop_reason(document, words)
        if reason:
            self.dropped[reason] += 1
            source["dropped"][reason] += 1
            return
        split = ("validation" if is_validation(document.doc_id, self.config.seed,
                                                self.config.validation_fraction) else "train")
        record = {"text": document.text, "source": document.source, "doc_id": document.doc_id}
        if "account" in document.provenance:  # a post's author pseudonym, for `corpus forget`
            record["account"] = document.provenance["account"]
        splits.write(split, dumps_line(record))
        killpoint.reached("document")
        size = len(document.text.encode("utf-8"))
        if "account" in record:
            self.kept_posts[document.doc_id] = _KeptPost(record["account"], document.source, split, words, size)
        source["kept"].add(words, size)
        self.splits[split].add(words, size)
        if document.published:
            day = document.published[:10]
            if source["first_published"] is None or day < source["first_published"]:
                source["first_published"] = day
            if source["last_published"] is None or day > source["last_published"]:
                source["last_published"] = day

    def _stats(self, started: datetime) -> dict[str, Any]:
        totals = _Tally()
        for tally in self.splits.values():
            totals.documents += tally.documents
            totals.words += tally.words
            totals.bytes += tally.bytes
        config = self.config
        return {
            "name": config.name,
            "built_at": started.isoformat(timespec="seconds"),
            "settings": {
                "validation_fraction": config.validation_fraction, "seed": config.seed,
                "min_words": config.min_words, "require_german": config.require_german,
                "near_duplicate_threshold": config.near_duplicate_threshold,
                "shingle_size": config.shingle_size, "num_perm": config.num_perm,
                "opt_out": str(config.opt_out) if config.opt_out else None,
                "max_crawl_age_days": config.max_crawl_age_days, "allow_stale": config.allow_stale,
            },
            "about": {"description": config.description, "intended_use": config.intended_use,
                      "maintainer": config.maintainer},
            "totals": totals.as_dict(),
            "splits": {split: tally.as_dict() for split, tally in self.splits.items()},
            "dropped": {reason: self.dropped[reason] for reason in DROP_REASONS},
            "sources": {
                name: {
                    **entry["kept"].as_dict(),
                    "read": entry["read"],
                    "dropped": {reason: entry["dropped"][reason] for reason in DROP_REASONS},
                    "first_published": entry["first_published"],
                    "last_published": entry["last_published"],
                }
                for name, entry in self.per_source.items()
            },
            "inputs": self.inputs,
            **({"removed_while_building": self.removed_while_building} if self.removed_while_building else {}),
            **({"removal_list": self.output_list.record()} if self.output_list is not None else {}),
        }


def write_outputs_summary(out: Path, stats: dict[str, Any]) -> None:
    """datasheet.md, then stats.json last (strict JSON, 0600): a folder with stats.json is complete."""
    atomic_write(out / "datasheet.md", render_datasheet(stats), permissions=PRIVATE_FILE)
    atomic_write(out / "stats.json", json.dumps(stats, ensure_ascii=False, indent=2, allow_nan=False) + "\n",
                 permissions=PRIVATE_FILE)
