"""`corpus forget`: take one person out of every crawl store and built corpus under some folders.

Nothing stores a handle, so the person is found by deriving their keyed pseudonym from
`HANDLE@INSTANCE` with the crawl key (the handle in its canonical form, however it is
written), or, from a URL, through the sealed re-identification data (a post's uri or url,
or a profile URL that the stored post URLs lie below), the addresses an earlier run of the
takedown listed (`tombstones`: a rerun after a kill finds a post that is gone), or the
profile URL's `user@host`.

Stores and corpora are found by what they hold (`corpus.finding`). A store whose state.json
was lost is opened as the crawler opens it (its state rebuilt); one whose removal list and
records are all lost is still cleaned, and stays marked as needing recovery (`crawl mastodon
--recover`).

Every folder that can be done is done: one that is in use, unreadable, written with another
key or damaged is named at the end (`Takedown.undone`), and the command fails then, so that
it is run again. Every step is finished by running the same command again after a kill at
any point: in a store the removal list is written first, then posts.jsonl and reid.jsonl,
then the state and stats (`CrawlStore`; a store that opens with listed posts still in it
purges them). In a corpus the removal list is written first; its statistics are copied to
`.forget-stats.json`, stats.json is removed, the split files are rewritten, datasheet.md and
stats.json are written from the copy and the remaining lines (the first and last publication
dates of a source that lost lines are withheld, since they may be the person's), and the copy
is removed last. A killed build's temporary split files are deleted: they never became a
corpus. Stores and corpora are locked as crawl and build lock them. A folder no queerbias
build wrote is never written to.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import unquote, urlsplit

from queerbias import killpoint
from queerbias.corpus.builder import SPLITS, write_outputs_summary
from queerbias.corpus.crawl_state import PENDING_STATS, corpus_list_record
from queerbias.corpus.finding import STATS, find_outputs, killed_build_files
from queerbias.crawl.canonical import canonical_handle, canonical_url
from queerbias.crawl.folder import PRIVATE_FILE, FolderLock
from queerbias.crawl.keys import CrawlKey
from queerbias.crawl.mastodon.records import DOC_PREFIX
from queerbias.crawl.mastodon.store import POSTS, RECOVERY_NEEDED, CrawlStore
from queerbias.crawl.mastodon.tombstones import FORGOTTEN, Tombstones
from queerbias.errors import DataError, QueerbiasError
from queerbias.fileio import atomic_open, atomic_write

_HANDLE = re.compile(r"[\w.\-]+@[\w.\-]+(?::\d+)?")
_PROFILE_PATH = re.compile(r"/(?:@|users/)([\w.\-]+)/?")


@dataclass
class Takedown:
    """What one run did: report lines, and the folders it could not do (each with why), for a rerun."""

    lines: list[str] = field(default_factory=list)
    undone: list[str] = field(default_factory=list)
    removed: int = 0  # posts and corpus lines


def _corpus_list(folder: Path, key: CrawlKey) -> Tombstones:
    """A corpus's removal list, checked against what its statistics recorded of it (id and counts)."""
    record = corpus_list_record(folder)
    return Tombstones.load(folder, key, list_id=record.get("list"),
                           expected={k: record[k] for k in ("posts", "accounts") if k in record})


def _accounts_for_url(url: str, key: CrawlKey, stores: list[CrawlStore], lists: list[Tombstones]) -> set[str]:
    """Account pseudonyms a URL leads to: a stored post's uri or url, a profile the stored post URLs lie below
    (Mastodon's usernames have no case), an address an earlier takedown listed, or failing those a profile
    URL's `user@host`; an empty set when it leads nowhere."""
    wanted = canonical_url(url)
    below = wanted.rstrip("/").casefold() + "/"
    address = key.post_pseudonym(wanted)
    found = {store.account_of(post) for store in stores for post, data in store.reidentification()
             if wanted in (canonical_url(data["uri"]), canonical_url(data["url"]))
             or canonical_url(data["url"]).casefold().startswith(below)}
    found |= {tombstones.addresses[address] for tombstones in lists if address in tombstones.addresses}
    found.discard(None)
    parts = urlsplit(wanted)
    match = _PROFILE_PATH.fullmatch(unquote(parts.path))
    if not found and parts.hostname and match:
        found = {key.account_pseudonym(f"{match.group(1)}@{parts.hostname}")}
    return found


def forget_in_corpus(folder: Path, key: CrawlKey, accounts: set[str], doc_ids: set[str]) -> tuple[int, str, set[str]]:
    """Remove the lines of `accounts` (and `doc_ids`) from a built corpus, or finish a removal that was killed;
    returns how many lines this takedown removed, a note for the report, and which of `accounts` had lines."""
    pending, stats_path = folder / PENDING_STATS, folder / STATS
    source = pending if pending.exists() else stats_path
    stats = _read_stats(source) if source.exists() else None
    for entry in (stats or {}).get("inputs", []):
        key.require_fingerprint((entry.get("crawl_state") or {}).get("key_fingerprint"), source)
    tombstones = _corpus_list(folder, key)
    tombstones.add(posts={d.removeprefix(DOC_PREFIX): FORGOTTEN for d in doc_ids},
                   accounts=dict.fromkeys(accounts, FORGOTTEN))
    if not tombstones.saved:
        tombstones.save()
    leftovers = killed_build_files(folder)
    for path in leftovers:
        path.unlink()
    note = f"; deleted {len(leftovers)} temporary files of a killed build" if leftovers else ""
    kept: dict[str, list[dict]] = {}
    removed, present = 0, set()
    for split in SPLITS:
        path = folder / f"{split}.jsonl"
        if path.exists():
            records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            kept[split] = [r for r in records if r.get("account") not in accounts and r.get("doc_id") not in doc_ids]
            removed += len(records) - len(kept[split])
            present |= {r.get("account") for r in records} & accounts
    if stats is None:  # a build killed before its statistics: the lines go, and the folder stays unfinished
        if removed:
            _write_splits(folder, kept)
        return removed, note + " (no stats.json: its build did not finish; build it again)", present
    if not removed and not pending.exists():
        if stats.get("removal_list") != tombstones.record():
            stats["removal_list"] = tombstones.record()
            write_outputs_summary(folder, stats)
        return 0, note, present
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
    return removed, note, present


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


def _holds_lines_of(folder: Path, accounts: set[str]) -> bool:
    """Whether split files no build of ours wrote hold a line of `accounts` (lines that are not JSON hold none)."""
    for split in SPLITS:
        path = folder / f"{split}.jsonl"
        if path.exists():
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and record.get("account") in accounts:
                    return True
    return False


def _undone(folder: Path, err: QueerbiasError) -> str:
    """Why `folder` was not done, naming it once (a refusal may name it already)."""
    return str(err) if str(err).startswith(str(folder)) else f"{folder}: {err}"


def _instances(stores: list[CrawlStore]) -> str:
    """The instances the stores crawled, each with the domain of its accounts: where a handle must point."""
    seen = {f"{url} (accounts @{(inst.get('probe') or {}).get('domain') or '?'})"
            for store in stores for url, inst in store.state["instances"].items()}
    return "; the stores here crawled " + ", ".join(sorted(seen)) if seen else "; no crawl store was opened here"


def _people(accounts: list[str], urls: list[str], key: CrawlKey, stores: list[CrawlStore],
            lists: list[Tombstones], undone: list[str]) -> set[str]:
    """The account pseudonyms of the people to forget: of the handles, and of whom the URLs lead to."""
    pseudonyms = {key.account_pseudonym(handle) for handle in accounts}
    for url in urls:
        led_to = _accounts_for_url(url, key, stores, lists)
        if not led_to:
            where = (" in the folders that could be read; run again when " + "; ".join(undone) if undone
                     else "; give the account as --account user@instance")
            raise QueerbiasError(f"{url} is neither a stored post nor a profile URL (https://instance/@user){where}")
        pseudonyms |= led_to
    return pseudonyms


def _forget_in_stores(stores: list[CrawlStore], pseudonyms: set[str], result: Takedown) -> tuple[set[str], set[str]]:
    """Take the people out of every open store; (their posts' doc_ids, the people any store held)."""
    doc_ids, held = set(), set()
    for store in stores:
        finished = {p for p, account in store.purged.items() if account in pseudonyms}  # by a killed run
        posts = store.posts_of(pseudonyms) | finished
        held |= {store.purged[p] for p in finished} | {store.account_of(p) for p in posts}
        doc_ids |= {DOC_PREFIX + p for p in posts}
        try:
            removed = sum(store.forget(pseudonyms).values()) + len(finished)
        except QueerbiasError as err:
            result.undone.append(_undone(store.dir, err))
            continue
        lost = (f"; its bookkeeping was lost: crawl, refresh and build refuse it until `queerbias crawl "
                f"mastodon --recover --out {store.dir}`") if store.state.get(RECOVERY_NEEDED) else ""
        result.lines.append(f"{store.dir / POSTS}: removed {removed} posts{lost}")
        result.removed += removed
    return doc_ids, held


def _forget_in_corpora(corpora: list[Path], key: CrawlKey, pseudonyms: set[str], doc_ids: set[str],
                       result: Takedown) -> set[str]:
    """Take the people out of every built corpus that is free; the people any corpus held lines of."""
    held = set()
    for folder in corpora:
        try:
            lock = FolderLock(folder, "forget")
            try:
                removed, note, present = forget_in_corpus(folder, key, pseudonyms, doc_ids)
            finally:
                lock.release()
        except QueerbiasError as err:
            result.undone.append(_undone(folder, err))
            continue
        held |= present
        result.removed += removed
        result.lines.append(f"{folder}: removed {removed} lines from "
                            f"{' and '.join(f'{s}.jsonl' for s in SPLITS)}{note}")
    return held


def forget(folders: list[Path], key: CrawlKey, accounts: list[str], urls: list[str]) -> Takedown:
    """Forget the people given by `accounts` (user@instance) and `urls` under `folders`: every folder that can be
    done is done, and those that cannot are named in the result."""
    for handle in accounts:
        if not _HANDLE.fullmatch(canonical_handle(handle)):
            raise QueerbiasError(f"not an account: {handle!r} (expected user@instance)")
    found = find_outputs(folders)
    if not found.stores and not found.corpora and not found.unreadable:
        raise QueerbiasError(f"no crawl store or built corpus under {', '.join(map(str, folders))}")
    result = Takedown(undone=[f"{folder}: {why}" for folder, why in found.unreadable.items()])
    stores, lists = [], []
    try:
        for folder in found.stores:
            try:
                stores.append(CrawlStore(folder, key, purpose="forget", takedown=True))
            except QueerbiasError as err:
                result.undone.append(_undone(folder, err))
        for folder in found.corpora:
            try:
                lists.append(_corpus_list(folder, key))
            except QueerbiasError:
                pass  # refused again, and named, when the corpus itself is done below
        lists += [store.tombstones for store in stores]
        pseudonyms = _people(accounts, urls, key, stores, lists, result.undone)
        known = {p for tombstones in lists for p in tombstones.accounts} & pseudonyms  # removed before
        doc_ids, held = _forget_in_stores(stores, pseudonyms, result)
        instances = _instances(stores)
    finally:
        for store in stores:
            store.close()
    known |= held | _forget_in_corpora(found.corpora, key, pseudonyms, doc_ids, result)
    for folder in found.foreign:
        if _holds_lines_of(folder, pseudonyms):
            result.undone.append(f"{folder}: holds lines of this person, but no queerbias build wrote it (no "
                                 "stats.json, no lock): take them out by hand, or build the corpus anew")
        else:
            result.lines.append(f"{folder}: left alone (no queerbias build wrote it, and it holds none of their "
                                "lines)")
    who = ", ".join(sorted(p[:12] for p in pseudonyms))
    result.lines.append(f"forgot account pseudonym(s) {who}: recorded in every store and corpus above"
                        + ("" if result.removed or pseudonyms - known else "; nothing was left to remove"))
    for pseudonym in sorted(pseudonyms - known):
        result.lines.append(f"no stored record has account pseudonym {pseudonym[:12]}: no post or line of it was "
                            f"here, nor was it removed before; check the handle{instances}")
    return result
