"""`queerbias crawl mastodon`: arguments, token loading, a progress bar, and a line per instance as it ends."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
from datetime import datetime, timezone
from pathlib import Path

from tqdm import tqdm

from queerbias.crawl.agent import build_user_agent
from queerbias.crawl.inputs import read_small_text
from queerbias.crawl.keys import KEY_ENV, CrawlKey, default_key_file
from queerbias.crawl.mastodon.crawler import PROBE_FAILED, CrawlInterrupted, Progress, crawl
from queerbias.crawl.mastodon.etiquette import load_deny_list
from queerbias.crawl.mastodon.refresh import refresh
from queerbias.crawl.mastodon.settings import (
    DEFAULT_INSTANCES,
    DEFAULT_MAX_REQUESTS,
    PRODUCT,
    CrawlSettings,
    check_token_transport,
    default_tags,
    normalise_instance,
    normalise_tag,
)
from queerbias.crawl.mastodon.store import POSTS, STATS, CrawlStore
from queerbias.errors import QueerbiasError
from queerbias.outputs import CRAWL, output_path, path_arg
from queerbias.text.keywords import DEFAULT_KEYWORDS

log = logging.getLogger(__name__)
TOKEN_ENV = "QUEERBIAS_MASTODON_TOKEN"
INTERRUPTED = 130  # the shell's code for a run ended by Ctrl-C
DESCRIPTION = ("Crawl hashtag feeds of Mastodon instances into OUT/posts.jsonl; rerun to resume or update, "
               "--refresh to re-check stored posts against their origin.")


def register(subparsers) -> None:
    """Add the `mastodon` source to `queerbias crawl`."""
    p = subparsers.add_parser("mastodon", help="crawl public German posts on LGBTQ+ topics from Mastodon instances",
                              description=DESCRIPTION)
    add_arguments(p)
    p.set_defaults(func=run)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=path_arg, required=True,
                   help="output folder (posts.jsonl, reid.jsonl, state.json, stats.json, tombstones.json)")
    p.add_argument("--refresh", action="store_true",
                   help="re-check every stored post against its origin: remove deleted posts and authors who "
                        "opted out, replace edited posts")
    p.add_argument("--recover", action="store_true",
                   help="a store whose removal list (tombstones.json) and its records (state.json, stats.json) were "
                        "lost is refused; this starts a new list from what is left, after which you repeat every "
                        "takedown you recorded and run --refresh (nothing is fetched)")
    p.add_argument("--instance", action="append", metavar="URL",
                   help=f"instance to crawl, repeatable (default: the {len(DEFAULT_INSTANCES)} of the seed study)")
    p.add_argument("--tag", action="append", metavar="TAG",
                   help="hashtag without '#', repeatable (default: derived from the keywords)")
    p.add_argument("--keyword", action="append", metavar="WORD",
                   help=f"keyword a kept post must contain, repeatable (default: the {len(DEFAULT_KEYWORDS)} "
                        "of the seed study)")
    p.add_argument("--local-timeline", action="store_true",
                   help="also crawl each instance's local timeline (keyword filter applies)")
    p.add_argument("--since", type=_parse_date, metavar="YYYY-MM-DD", help="ignore posts older than this date (UTC)")
    p.add_argument("--max-requests", type=int, default=DEFAULT_MAX_REQUESTS, metavar="N",
                   help="HTTP requests per instance (or origin server, with --refresh) and run "
                        "(default: %(default)s); rerun to go on")
    p.add_argument("--contact", metavar="EMAIL_OR_URL",
                   help="how admins reach you; goes into the User-Agent (required unless --user-agent has one)")
    p.add_argument("--user-agent", help="whole User-Agent header instead of the default; must contain a contact")
    p.add_argument("--token-file", type=path_arg, metavar="PATH",
                   help=f"file holding an access token (else ${TOKEN_ENV}); sent to one instance only, over https")
    p.add_argument("--token-instance", metavar="URL",
                   help="instance the token belongs to (needed when crawling more than one)")
    p.add_argument("--key-file", type=path_arg, metavar="PATH",
                   help=f"the crawl key for pseudonyms and sealed data, outside OUT (default: ${KEY_ENV}, else "
                        f"{default_key_file()}; created 0600 on first use)")
    p.add_argument("--allow-instance", action="append", default=[], metavar="URL",
                   help="this instance's admin agreed to be crawled: crawl it despite robots.txt (AI-training "
                        "opt-outs included), rules that mention AI or scraping, or login-only feeds (with a token); "
                        "recorded in stats.json; repeatable")
    p.add_argument("--deny-list", action="append", default=[], type=path_arg, metavar="PATH",
                   help="file of instance hosts never to crawl (one per line), added to the shipped list")
    p.add_argument("--accept-missing-indexable", action="store_true",
                   help="treat accounts on servers that do not send 'indexable' (Mastodon < 4.2, Pleroma, Akkoma) "
                        "as consenting; by default they count as opted out")


def _parse_date(value: str) -> datetime:
    try:
        return datetime.strptime(value, "%Y-%m-%d").replace(tzinfo=timezone.utc)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date: {value!r} (expected YYYY-MM-DD)") from None


def _load_token(path: Path | None) -> str | None:
    if path is not None:
        lines = read_small_text(path, "token file").splitlines()
        token = lines[0].strip() if lines else ""
        if not token:
            raise QueerbiasError(f"token file {path} is empty")
        return token
    return os.environ.get(TOKEN_ENV) or None


def settings_from_args(args: argparse.Namespace) -> CrawlSettings:
    """Validate the arguments into CrawlSettings; problems become one-line QueerbiasErrors."""
    if args.max_requests < 1:
        raise QueerbiasError("--max-requests must be at least 1")
    user_agent = build_user_agent(PRODUCT, args.contact, args.user_agent)
    instances = tuple(dict.fromkeys(normalise_instance(i) for i in (args.instance or DEFAULT_INSTANCES)))
    keywords = tuple(args.keyword or DEFAULT_KEYWORDS)
    tags = tuple(dict.fromkeys(normalise_tag(t) for t in args.tag)) if args.tag else tuple(default_tags(keywords))
    token = _load_token(args.token_file)
    token_instance = normalise_instance(args.token_instance) if args.token_instance else None
    if token and token_instance is None:
        if len(instances) != 1:
            raise QueerbiasError("an access token is set; name its instance with --token-instance "
                                 "(it is never sent to other instances)")
        token_instance = instances[0]
    if token_instance and token_instance not in instances:
        raise QueerbiasError(f"--token-instance {token_instance} is not among the crawled instances")
    if token:
        check_token_transport(token_instance)
    out = output_path(args.out, [args.token_file, *args.deny_list], kind=CRAWL)
    return CrawlSettings(out_dir=out, instances=instances, tags=tags, keywords=keywords,
                         local_timeline=args.local_timeline, since=args.since, max_requests=args.max_requests,
                         user_agent=user_agent, token=token, token_instance=token_instance,
                         key_file=args.key_file or default_key_file(),
                         allowed_instances=frozenset(normalise_instance(i) for i in args.allow_instance),
                         deny_list=load_deny_list(args.deny_list),
                         accept_missing_indexable=args.accept_missing_indexable)


def instance_line(url: str, inst: dict) -> str:
    """One line on what a crawl did with an instance."""
    dropped = ", ".join(f"{k} {v}" for k, v in sorted(inst["dropped"].items())) or "none"
    return (f"{url}: {inst['status']}; fetched {inst['fetched']}, kept {inst['kept']}, duplicates {inst['duplicates']}, "
            f"dropped: {dropped}")


class BarProgress(Progress):
    """A crawl's progress: a bar of pages (posts looked at and kept, instances done) on stderr when it is a
    terminal, nothing in logs or pipes; each instance's line on stdout as soon as it is done."""

    def __init__(self, instances: int):
        self._bar = tqdm(unit="page", desc="crawl mastodon", disable=None, dynamic_ncols=True)
        self._lock = threading.Lock()
        self._instances, self._done, self._fetched, self._kept = instances, 0, 0, 0

    def page(self, fetched: int, kept: int) -> None:
        with self._lock:
            self._fetched += fetched
            self._kept += kept
            self._show()
            self._bar.update()

    def done(self, url: str, stats: dict) -> None:
        with self._lock:
            self._done += 1
            self._show()
            self._bar.clear()  # the line goes to stdout, the bar to stderr: both may be the same terminal
            print(instance_line(url, stats), flush=True)
            self._bar.refresh()

    def _show(self) -> None:
        self._bar.set_postfix_str(f"posts {self._fetched}, kept {self._kept}, instances {self._done}/{self._instances}",
                                  refresh=False)

    def close(self) -> None:
        self._bar.close()


def _report_crawl(settings: CrawlSettings, stats: dict) -> None:
    """The total, and an error when no instance could be probed at all (the per-instance lines came as each ended)."""
    unreachable = [url for url in settings.instances
                   if str(stats["instances"][url]["status"]).startswith(PROBE_FAILED)]
    print(f"{stats['posts']} posts in {settings.out_dir / POSTS}")
    if len(unreachable) == len(settings.instances):
        raise QueerbiasError(f"no instance could be crawled; see {settings.out_dir / STATS}")


def run(args: argparse.Namespace) -> int:
    """Crawl (or refresh), print one line per instance; fail only when no instance could be crawled at all."""
    # urllib3's debug lines name request paths, i.e. status ids and paging cursors: not for logs.
    logging.getLogger("urllib3").setLevel(max(logging.INFO, logging.getLogger().getEffectiveLevel()))
    if args.recover:
        return _recover(args)
    settings = settings_from_args(args)
    try:
        if args.refresh:
            result = refresh(settings)
            counts = ", ".join(f"{k} {v}" for k, v in result["counts"].items()) or "nothing to check"
            print(f"refresh of {settings.out_dir}: {counts}; "
                  + ("pass complete" if result["complete"] else "pass not complete: rerun --refresh to go on"))
        else:
            progress = BarProgress(len(settings.instances))
            try:
                stats = crawl(settings, progress=progress)
            finally:
                progress.close()
            _report_crawl(settings, stats)
    except (CrawlInterrupted, KeyboardInterrupt) as err:
        message = str(err) or f"interrupted; everything committed is saved in {settings.out_dir}; rerun to resume"
        print(f"crawl mastodon: {message}", file=sys.stderr)
        return INTERRUPTED
    return 0


def _recover(args: argparse.Namespace) -> int:
    """Open a store whose bookkeeping was lost, accepting a new removal list; say what the user does next."""
    key = CrawlKey.existing(args.key_file or default_key_file(), outputs=(args.out,))
    store = CrawlStore(args.out, key, purpose="recover", recover=True)
    try:
        counts = store.tombstones.counts()
        posts = store.state["records"]
    finally:
        store.close()
    print(f"recovered {args.out}: {posts} posts; its removal list now holds {counts['posts']} posts and "
          f"{counts['accounts']} accounts. Removals made before the loss may be missing: repeat every takedown you "
          f"recorded (`queerbias corpus forget`), then run `queerbias crawl mastodon --refresh --out {args.out}` "
          "(a build refuses the store until that pass is complete)")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of crawl/mastodon.py. Builds only this parser: the full CLI would import every
    command's dependencies (torch, transformers) just to crawl."""
    parser = argparse.ArgumentParser(prog="crawl/mastodon.py", description=DESCRIPTION)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    add_arguments(parser)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return run(args)
    except QueerbiasError as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        return 2
