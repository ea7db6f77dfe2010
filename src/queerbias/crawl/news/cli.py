"""`queerbias crawl news`: crawl RSS/Atom feeds into OUT/news.jsonl; rerun to resume."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from queerbias.crawl.addresses import host_port
from queerbias.crawl.agent import build_user_agent
from queerbias.crawl.inputs import read_small_text
from queerbias.crawl.news.crawler import NewsCrawler
from queerbias.crawl.news.http import Fetcher
from queerbias.crawl.news.robots import MAX_CRAWL_DELAY
from queerbias.errors import QueerbiasError
from queerbias.options import cli_type, integer, number
from queerbias.outputs import CRAWL, output_path, path_arg
from queerbias.text.keywords import DEFAULT_KEYWORDS, KeywordMatcher

NEWS, STATE = "news.jsonl", "state.json"
#: the longest a request may take: a longer --timeout (or `inf`) would let one host stall the crawl
MAX_TIMEOUT = 300.0


def register(subparsers) -> None:
    """Add the `news` source to `queerbias crawl`."""
    p = subparsers.add_parser(
        "news", help="crawl RSS/Atom news feeds for articles on LGBTQ+ topics",
        description="Fetch feeds, extract each linked article, keep those matching the keywords; "
                    "writes OUT/news.jsonl (document schema) and OUT/state.json. Rerun to resume.")
    p.add_argument("--feed", action="append", default=[], metavar="URL",
                   help="RSS or Atom feed URL, repeatable")
    p.add_argument("--feeds-file", type=path_arg, metavar="PATH",
                   help="file with one feed URL per line ('#' starts a comment)")
    p.add_argument("--out", type=path_arg, default=Path("corpora/news"),
                   help="output folder (default: %(default)s)")
    p.add_argument("--keyword", action="append", metavar="WORD",
                   help=f"keyword a kept article must contain, repeatable (default: the "
                        f"{len(DEFAULT_KEYWORDS)} of the seed study)")
    p.add_argument("--max-items", type=cli_type(integer, "a whole number", 1), metavar="N",
                   help="items per feed and run")
    p.add_argument("--timeout", type=cli_type(number, "a finite number of seconds", 1, MAX_TIMEOUT), default=20.0,
                   help=f"seconds per request, 1 to {MAX_TIMEOUT:.0f} (%(default)s)")
    p.add_argument("--max-bytes", type=cli_type(integer, "a whole number", 1), default=5_000_000,
                   help="largest feed or page accepted (default: %(default)s)")
    p.add_argument("--delay", type=cli_type(number, "a finite number of seconds", 0, MAX_CRAWL_DELAY), default=1.0,
                   help=f"seconds between requests to one host, 0 to {MAX_CRAWL_DELAY:.0f}, the longest Crawl-delay "
                        "a site may ask for (default: %(default)s)")
    p.add_argument("--contact", metavar="EMAIL_OR_URL",
                   help="how site owners reach you; goes into the User-Agent (required unless --user-agent has one)")
    p.add_argument("--user-agent", help="whole User-Agent header instead of the default; must contain a contact")
    p.add_argument("--ignore-robots", action="store_true",
                   help="do not consult robots.txt (only for sites that allowed it otherwise)")
    p.add_argument("--allow-private-host", action="append", default=[], metavar="HOST:PORT",
                   help="fetch from this loopback or private address anyway (a local mirror); repeatable. "
                        "Every other internal address is refused")
    p.set_defaults(func=run)


def feed_urls(args: argparse.Namespace) -> list[str]:
    urls = list(args.feed)
    if args.feeds_file:
        lines = read_small_text(args.feeds_file, "feeds file").splitlines()
        urls += [line.split("#", 1)[0].strip() for line in lines]
    urls = list(dict.fromkeys(url for url in urls if url))
    if not urls:
        raise QueerbiasError("no feeds given: use --feed URL or --feeds-file PATH")
    return urls


def _host_port(value: str) -> str:
    host, sep, port = value.strip().rpartition(":")
    if not sep or not host or not port.isdigit():
        raise QueerbiasError(f"--allow-private-host expects HOST:PORT, got {value!r}")
    return host_port(host, int(port))


def run(args: argparse.Namespace) -> int:
    user_agent = build_user_agent("queerbias-news", args.contact, args.user_agent)
    feeds = feed_urls(args)
    args.out = output_path(args.out, [args.feeds_file], kind=CRAWL)
    fetcher = Fetcher(user_agent=user_agent, timeout=args.timeout, max_bytes=args.max_bytes, delay=args.delay,
                      allowed_hosts=[_host_port(value) for value in args.allow_private_host])
    crawler = NewsCrawler(fetcher, KeywordMatcher(args.keyword or DEFAULT_KEYWORDS),
                          output=args.out / NEWS, state_path=args.out / STATE,
                          respect_robots=not args.ignore_robots, max_items_per_feed=args.max_items)
    counts = crawler.run(feeds)
    print(f"news: {counts['kept']} new articles -> {args.out / NEWS}; {json.dumps(dict(counts))}")
    for feed, error in crawler.failed_feeds.items():
        print(f"  feed failed: {error}", file=sys.stderr)
    if len(crawler.failed_feeds) == len(feeds):
        raise QueerbiasError("every feed failed")
    return 1 if crawler.failed_feeds else 0

