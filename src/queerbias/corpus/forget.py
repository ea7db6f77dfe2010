"""`corpus forget`: take one person out of every crawl store and built corpus under some folders.

Nothing stores a handle, so the person is found by deriving their keyed pseudonym from
`HANDLE@INSTANCE` with the crawl key, or, from a URL, through the sealed
re-identification data (a post's uri or url, or a profile URL that the stored post
URLs lie below). In every Mastodon store the pseudonym and their posts are first put on
the store's sealed removal list (so no later crawl, refresh or rebuilt state brings the
person back, from whichever instance), then their posts are removed. In every built corpus
their lines are removed (by account pseudonym, and by the doc_ids just removed from the
stores, for corpora built before lines carried the account), the removals are listed there
too, and stats.json and datasheet.md are rewritten, stats.json last; the first and last
publication dates of a source that lost lines are withheld, since they may be the
person's. Running it again removes nothing and says so. A store or corpus written with
another key is refused.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlsplit

from queerbias.corpus.builder import SPLITS, write_outputs_summary
from queerbias.crawl.folder import PRIVATE_FILE, FolderLock
from queerbias.crawl.keys import CrawlKey, normalise_handle
from queerbias.crawl.mastodon.records import DOC_PREFIX
from queerbias.crawl.mastodon.store import POSTS, STATE, CrawlStore, read_state
from queerbias.crawl.mastodon.tombstones import FORGOTTEN, Tombstones
from queerbias.errors import DataError, QueerbiasError
from queerbias.fileio import atomic_open

_HANDLE = re.compile(r"[\w.\-]+@[\w.\-]+(?::\d+)?")
_PROFILE_PATH = re.compile(r"/(?:@|users/)([\w.\-]+)/?")


def find_outputs(folders: list[Path]) -> tuple[list[Path], list[Path]]:
    """(Mastodon crawl stores, built corpora) in or under `folders`."""
    stores, corpora = [], []
    for folder in folders:
        if not Path(folder).is_dir():
            raise DataError(folder, "not a folder")
        for root, _, files in os.walk(folder):
            if STATE in files and POSTS in files and read_state(Path(root)) is not None:
                stores.append(Path(root))
            if "stats.json" in files and "train.jsonl" in files:
                corpora.append(Path(root))
    return sorted(set(stores)), sorted(set(corpora))


def _accounts_for_url(url: str, key: CrawlKey, stores: list[CrawlStore]) -> set[str]:
    """Account pseudonyms a URL leads to: a stored post's uri or url, a profile the stored post URLs lie
    below, or failing those a profile URL's `user@host`."""
    wanted = url.strip()
    below = wanted.rstrip("/") + "/"
    found = {store.account_of(post) for store in stores for post, data in store.reidentification()
             if wanted in (data["uri"], data["url"]) or str(data["url"]).startswith(below)}
    found.discard(None)
    if found:
        return found
    parts = urlsplit(wanted)
    match = _PROFILE_PATH.fullmatch(parts.path)
    if parts.hostname and match:
        return {key.account_pseudonym(f"{match.group(1)}@{parts.hostname}")}
    raise QueerbiasError(f"{url} is neither a stored post nor a profile URL (https://instance/@user); "
                         "give the account as --account user@instance")


def forget_in_corpus(folder: Path, key: CrawlKey, accounts: set[str], doc_ids: set[str]) -> int:
    """Remove the lines of `accounts` (and `doc_ids`) from a built corpus; returns how many."""
    stats_path = folder / "stats.json"
    try:
        stats = json.loads(stats_path.read_text(encoding="utf-8"))
        inputs = stats["inputs"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise DataError(stats_path, f"unreadable corpus statistics ({err}); rebuild the corpus") from None
    for entry in inputs:
        key.require_fingerprint((entry.get("crawl_state") or {}).get("key_fingerprint"), stats_path)
    Tombstones.load(folder, key).add(posts={d.removeprefix(DOC_PREFIX): FORGOTTEN for d in doc_ids},
                                     accounts=dict.fromkeys(accounts, FORGOTTEN))
    kept: dict[str, list[dict]] = {}
    removed = 0
    for split in SPLITS:
        kept[split] = []
        for line in (folder / f"{split}.jsonl").read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("account") in accounts or record.get("doc_id") in doc_ids:
                removed += 1
            else:
                kept[split].append(record)
    if not removed:
        return 0
    stats_path.unlink()  # the folder is incomplete until the new stats.json is written last
    for split, records in kept.items():
        with atomic_open(folder / f"{split}.jsonl", permissions=PRIVATE_FILE) as out:
            out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    _recount(stats, kept)
    stats["forgotten_after_build"] = stats.get("forgotten_after_build", 0) + removed
    stats["forgotten_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    write_outputs_summary(folder, stats)
    return removed


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
            stores.append(CrawlStore(folder, key, purpose="forget"))
        pseudonyms = {key.account_pseudonym(handle) for handle in accounts}
        for url in urls:
            pseudonyms |= _accounts_for_url(url, key, stores)
        lines, doc_ids, total = [], set(), 0
        for store in stores:
            posts = store.posts_of(pseudonyms)
            doc_ids |= {DOC_PREFIX + p for p in posts}
            removed = sum(store.forget(pseudonyms).values())
            total += removed
            lines.append(f"{store.dir / POSTS}: removed {removed} posts")
    finally:
        for store in stores:
            store.close()
    for folder in corpora:
        lock = FolderLock(folder, "forget")
        try:
            removed = forget_in_corpus(folder, key, pseudonyms, doc_ids)
        finally:
            lock.release()
        total += removed
        lines.append(f"{folder}: removed {removed} lines from {' and '.join(f'{s}.jsonl' for s in SPLITS)}")
    who = ", ".join(sorted(p[:12] for p in pseudonyms))
    lines.append(f"forgot account pseudonym(s) {who}: recorded in every store and corpus above"
                 + ("" if total else "; nothing was left to remove"))
    return lines
