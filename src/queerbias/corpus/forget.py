"""`corpus forget`: take one person out of every crawl store and built corpus under some folders.

Nothing stores a handle, so the person is found by deriving their keyed pseudonym from
`HANDLE@INSTANCE` with the crawl key (the domain as an IDNA A-label, however it is
written), or, from a URL, through the sealed re-identification data (a post's uri or url,
or a profile URL that the stored post URLs lie below).

Stores and corpora are found by what they hold, not by one bookkeeping file: a crawl
store by its Mastodon posts, its sealed data or its state; a built corpus by its split
files, the temporary split files of a build that was killed, or the statistics a takedown
keeps while it rewrites the corpus. A store whose state.json was lost is opened as the
crawler opens it (its state rebuilt); one whose removal list and records are all lost is
still cleaned, and stays marked as needing recovery (`crawl mastodon --recover`).

Every step is finished by running the same command again after a kill at any point:
in a store the removal list is written first, then posts.jsonl and reid.jsonl, then the
state and stats (`CrawlStore`; a store that opens with listed posts still in it purges
them). In a corpus the removal list is written first; its statistics are copied to
`.forget-stats.json`, stats.json is removed, the split files are rewritten, datasheet.md
and stats.json are written from the copy and the remaining lines (the first and last
publication dates of a source that lost lines are withheld, since they may be the
person's), and the copy is removed last. A killed build's temporary split files are
deleted: they never became a corpus. Stores and corpora are locked as crawl and build lock
them; one in use is refused, and the command is run again when it is free.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlsplit

from queerbias import killpoint
from queerbias.corpus.builder import SPLITS, write_outputs_summary
from queerbias.corpus.crawl_state import PENDING_STATS, corpus_list_record
from queerbias.crawl.folder import PRIVATE_FILE, FolderLock
from queerbias.crawl.hosts import normalise_url
from queerbias.crawl.keys import CrawlKey, normalise_handle
from queerbias.crawl.mastodon.records import DOC_PREFIX
from queerbias.crawl.mastodon.store import (
    POSTS,
    RECOVERY_NEEDED,
    REID,
    STATE,
    CrawlStore,
    StoreError,
    read_state,
)
from queerbias.crawl.mastodon.tombstones import FORGOTTEN, Tombstones
from queerbias.errors import DataError, QueerbiasError
from queerbias.fileio import atomic_open, atomic_write

_HANDLE = re.compile(r"[\w.\-]+@[\w.\-]+(?::\d+)?")
_PROFILE_PATH = re.compile(r"/(?:@|users/)([\w.\-]+)/?")
STATS = "stats.json"


def _killed_build_files(folder: Path) -> list[Path]:
    """The temporary split files a killed `corpus build` left (its finished outputs never hold them)."""
    return sorted(p for split in SPLITS for p in Path(folder).glob(f".{split}.jsonl.*.tmp"))


def _is_corpus(folder: Path, files: list[str]) -> bool:
    return any(f"{split}.jsonl" in files for split in SPLITS) or PENDING_STATS in files \
        or bool(_killed_build_files(folder))


def _holds_mastodon_posts(path: Path) -> bool:
    """Whether the first record of a JSONL file is a Mastodon post of ours (doc_id `mastodon:...`, an account)."""
    try:
        with open(path, "rb") as handle:
            for line in handle:
                if line.strip():
                    record = json.loads(line)
                    return isinstance(record, dict) and "account" in record \
                        and str(record.get("doc_id", "")).startswith(DOC_PREFIX)
    except (OSError, ValueError):
        return False
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


def find_outputs(folders: list[Path]) -> tuple[list[Path], list[Path]]:
    """(Mastodon crawl stores, built corpora) in or under `folders`, recognised by what they hold."""
    stores, corpora = set(), set()
    for folder in folders:
        if not Path(folder).is_dir():
            raise DataError(folder, "not a folder")
        for root, _, files in os.walk(folder):
            root = Path(root)
            if _is_corpus(root, files):
                corpora.add(root)
            elif _is_store(root, files):
                stores.add(root)
    return sorted(stores), sorted(corpora)


def _accounts_for_url(url: str, key: CrawlKey, stores: list[CrawlStore]) -> set[str]:
    """Account pseudonyms a URL leads to: a stored post's uri or url, a profile the stored post URLs lie
    below, or failing those a profile URL's `user@host`."""
    wanted = normalise_url(url)
    below = wanted.rstrip("/") + "/"
    found = {store.account_of(post) for store in stores for post, data in store.reidentification()
             if wanted in (normalise_url(data["uri"]), normalise_url(data["url"]))
             or normalise_url(data["url"]).startswith(below)}
    found.discard(None)
    if found:
        return found
    parts = urlsplit(wanted)
    match = _PROFILE_PATH.fullmatch(parts.path)
    if parts.hostname and match:
        return {key.account_pseudonym(f"{match.group(1)}@{parts.hostname}")}
    raise QueerbiasError(f"{url} is neither a stored post nor a profile URL (https://instance/@user); "
                         "give the account as --account user@instance")


def forget_in_corpus(folder: Path, key: CrawlKey, accounts: set[str], doc_ids: set[str]) -> tuple[int, str]:
    """Remove the lines of `accounts` (and `doc_ids`) from a built corpus, or finish a removal that was killed;
    returns how many lines this takedown removed and a note for the report."""
    pending, stats_path = folder / PENDING_STATS, folder / STATS
    source = pending if pending.exists() else stats_path
    stats = _read_stats(source) if source.exists() else None
    for entry in (stats or {}).get("inputs", []):
        key.require_fingerprint((entry.get("crawl_state") or {}).get("key_fingerprint"), source)
    record = corpus_list_record(folder)
    tombstones = Tombstones.load(folder, key, list_id=record.get("list"),
                                 expected={k: record[k] for k in ("posts", "accounts") if k in record})
    tombstones.add(posts={d.removeprefix(DOC_PREFIX): FORGOTTEN for d in doc_ids},
                   accounts=dict.fromkeys(accounts, FORGOTTEN))
    if not tombstones.saved:
        tombstones.save()
    leftovers = _killed_build_files(folder)
    for path in leftovers:
        path.unlink()
    note = f"; deleted {len(leftovers)} temporary files of a killed build" if leftovers else ""
    kept: dict[str, list[dict]] = {}
    removed = 0
    for split in SPLITS:
        path = folder / f"{split}.jsonl"
        if path.exists():
            records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            kept[split] = [r for r in records if r.get("account") not in accounts and r.get("doc_id") not in doc_ids]
            removed += len(records) - len(kept[split])
    if stats is None:  # a build killed before its statistics: the lines go, and the folder stays unfinished
        if removed:
            _write_splits(folder, kept)
        return removed, note + " (no stats.json: its build did not finish; build it again)"
    if not removed and not pending.exists():
        if stats.get("removal_list") != tombstones.record():
            stats["removal_list"] = tombstones.record()
            write_outputs_summary(folder, stats)
        return 0, note
    if not pending.exists():
        atomic_write(pending, json.dumps(stats, ensure_ascii=False), permissions=PRIVATE_FILE)
        killpoint.reached("removal")
    stats_path.unlink(missing_ok=True)  # the folder is incomplete until the new stats.json is written last
    killpoint.reached("removal")
    _write_splits(folder, kept)
    before = stats["totals"]["documents"]
    _recount(stats, kept)
    removed = before - stats["totals"]["documents"]  # also what an interrupted run of this takedown removed
    stats["forgotten_after_build"] = stats.get("forgotten_after_build", 0) + removed
    stats["forgotten_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    stats["removal_list"] = tombstones.record()
    write_outputs_summary(folder, stats)
    killpoint.reached("removal")
    pending.unlink()
    return removed, note


def _read_stats(path: Path) -> dict:
    try:
        stats = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(stats.get("inputs"), list) or not isinstance(stats.get("totals"), dict):
            raise ValueError("not the statistics of a built corpus")
    except (OSError, ValueError, AttributeError) as err:
        raise DataError(path, f"unreadable corpus statistics ({err}); rebuild the corpus") from None
    return stats


def _write_splits(folder: Path, kept: dict[str, list[dict]]) -> None:
    for split, records in kept.items():
        with atomic_open(folder / f"{split}.jsonl", permissions=PRIVATE_FILE) as out:
            out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        killpoint.reached("removal")


def _recount(stats: dict, kept: dict[str, list[dict]]) -> None:
    """Documents, words and MB per split, per source and in total, from the lines that remain. A source
    that lost lines loses its first and last publication dates too: they may have been the person's, and
    the lines do not carry dates to recompute them from."""
    def tally(records):
        size = sum(len(r["text"].encode("utf-8")) for r in records)
        return {"documents": len(records), "words": sum(len(r["text"].split()) for r in records),
                "mb": round(size / 1_000_000, 3)}
    every = [r for records in kept.values() for r in records]
    stats["totals"] = tally(every)
    stats["splits"] = {split: tally(records) for split, records in kept.items()}
    by_source: dict[str, list] = {}
    for record in every:
        by_source.setdefault(record["source"], []).append(record)
    for name, entry in stats["sources"].items():
        counts = tally(by_source.get(name, []))
        if counts["documents"] < entry["documents"]:
            entry.update(first_published=None, last_published=None)
        entry.update(counts)


def forget(folders: list[Path], key: CrawlKey, accounts: list[str], urls: list[str]) -> list[str]:
    """Forget the people given by `accounts` (user@instance) and `urls` under `folders`; report lines."""
    for handle in accounts:
        if not _HANDLE.fullmatch(normalise_handle(handle)):
            raise QueerbiasError(f"not an account: {handle!r} (expected user@instance)")
    store_dirs, corpora = find_outputs(folders)
    if not store_dirs and not corpora:
        raise QueerbiasError(f"no crawl store or built corpus under {', '.join(map(str, folders))}")
    stores = []
    try:
        for folder in store_dirs:
            stores.append(CrawlStore(folder, key, purpose="forget", takedown=True))
        pseudonyms = {key.account_pseudonym(handle) for handle in accounts}
        for url in urls:
            pseudonyms |= _accounts_for_url(url, key, stores)
        lines, doc_ids, total = [], set(), 0
        for store in stores:
            finished = {p for p, account in store.purged.items() if account in pseudonyms}  # by a killed run
            posts = store.posts_of(pseudonyms) | finished
            doc_ids |= {DOC_PREFIX + p for p in posts}
            removed = sum(store.forget(pseudonyms).values()) + len(finished)
            total += removed
            lost = (f"; its bookkeeping was lost: crawl, refresh and build refuse it until `queerbias crawl "
                    f"mastodon --recover --out {store.dir}`") if store.state.get(RECOVERY_NEEDED) else ""
            lines.append(f"{store.dir / POSTS}: removed {removed} posts{lost}")
    finally:
        for store in stores:
            store.close()
    for folder in corpora:
        lock = FolderLock(folder, "forget")
        try:
            removed, note = forget_in_corpus(folder, key, pseudonyms, doc_ids)
        finally:
            lock.release()
        total += removed
        lines.append(f"{folder}: removed {removed} lines from {' and '.join(f'{s}.jsonl' for s in SPLITS)}{note}")
    who = ", ".join(sorted(p[:12] for p in pseudonyms))
    lines.append(f"forgot account pseudonym(s) {who}: recorded in every store and corpus above"
                 + ("" if total else "; nothing was left to remove"))
    return lines
