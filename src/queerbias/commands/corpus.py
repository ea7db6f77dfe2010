"""`queerbias corpus`: select taz articles (`taz`), build training corpora (`build`), and take a person
out of crawls and corpora (`forget`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from queerbias.corpus.builder import MIN_WORDS, BuildConfig, CorpusBuilder
from queerbias.corpus.crawl_state import MAX_CRAWL_AGE_DAYS
from queerbias.corpus.forget import forget
from queerbias.corpus.io import BadRecords
from queerbias.corpus.manifest import CORPORA_DIR, load_manifest
from queerbias.corpus.sources import SourceSpec
from queerbias.corpus.taz import TazReader, default_since_year
from queerbias.crawl.keys import KEY_ENV, CrawlKey, default_key_file
from queerbias.errors import QueerbiasError
from queerbias.fileio import atomic_open, dumps_line
from queerbias.options import MAX_SEED, cli_type, integer
from queerbias.outputs import CORPUS, output_path, path_arg
from queerbias.text.keywords import DEFAULT_KEYWORDS, KeywordMatcher


def register(subparsers) -> None:
    parser = subparsers.add_parser("corpus", help="build text corpora (taz archive, merge/split)",
                                   description=__doc__)
    commands = parser.add_subparsers(dest="corpus_command", required=True, metavar="STEP")

    taz = commands.add_parser(
        "taz", help="select queer-related articles from the taz2024full archive",
        description="Stream taz2024full month files (JSON, JSONL or Parquet), keep articles of "
                    "the chosen years that match the LGBTQ+ keywords, write documents JSONL.")
    taz.add_argument("paths", nargs="+", type=path_arg, help="archive files or folders")
    taz.add_argument("-o", "--output", type=path_arg, default=CORPORA_DIR / "taz" / "taz.jsonl",
                     help="documents JSONL to write (default: %(default)s)")
    taz.add_argument("--since-year", type=int, default=None,
                     help=f"first year to keep (default: this year - 6 = {default_since_year()})")
    taz.add_argument("--until-year", type=int, default=None, help="last year to keep")
    taz.add_argument("--skip-bad", action="store_true",
                     help="skip and count unusable records instead of stopping at the first")
    taz.set_defaults(func=run_taz)

    build = commands.add_parser(
        "build", help="merge sources into train/validation JSONL with stats and datasheet",
        description="Merge, filter, deduplicate and split sources. Options given here "
                    "override the manifest.")
    build.add_argument("--manifest", type=path_arg, help="corpus recipe (corpora/manifests/*.yaml)")
    build.add_argument("--source", action="append", default=[], metavar="[NAME=]PATH",
                       help="a JSONL source (posts.jsonl, documents, or any JSONL with 'text'); "
                            "repeatable, earlier sources win duplicates")
    build.add_argument("--name", help="corpus name (output folder corpora/NAME)")
    build.add_argument("-o", "--output", type=path_arg, help="output folder (without --name, the corpus is named after it)")
    build.add_argument("--validation-fraction", type=float,
                       help="share of documents in validation.jsonl (default 0.05)")
    build.add_argument("--seed", type=cli_type(integer, "an integer", 0, MAX_SEED), help="split seed (default 0)")
    build.add_argument("--min-words", action="append", default=[], metavar="KIND=N",
                       help="minimum words for a kind; defaults "
                            + ", ".join(f"{k}={v}" for k, v in MIN_WORDS.items()))
    build.add_argument("--near-duplicate-threshold", type=float,
                       help="Jaccard similarity from which texts are near duplicates (0.8)")
    build.add_argument("--no-near-duplicates", action="store_true",
                       help="keep near duplicates (exact duplicates are still removed)")
    build.add_argument("--all-languages", action="store_true", help="do not drop non-German text")
    build.add_argument("--opt-out", type=path_arg,
                       help="file of doc_ids, URLs and URL prefixes to exclude (people: use `corpus forget`)")
    build.add_argument("--skip-bad", action="store_true",
                       help="skip and count unusable records instead of stopping")
    build.add_argument("--max-crawl-age", type=float, metavar="DAYS",
                       help=f"refuse a Mastodon crawl whose posts were last checked longer ago "
                            f"(default {MAX_CRAWL_AGE_DAYS}; refresh it with `crawl mastodon --refresh`)")
    build.add_argument("--allow-stale", action="store_true",
                       help="build from a Mastodon crawl that is older than --max-crawl-age or has no state")
    build.add_argument("--key-file", type=path_arg, metavar="PATH",
                       help=f"the crawl key that opens the crawls' lists of removed posts and authors (default: "
                            f"${KEY_ENV}, else {default_key_file()})")
    build.set_defaults(func=run_build)

    forget_cmd = commands.add_parser(
        "forget", help="remove a person's posts from crawl stores and built corpora (takedown)",
        description="Remove every post of one person from the Mastodon crawl stores and built corpora in or "
                    "under DIR, and put them on every removal list there so that no later crawl, refresh or "
                    "build adds them again. Idempotent. Needs the crawl key the stores were written with.")
    forget_cmd.add_argument("folders", nargs="+", type=path_arg, metavar="DIR",
                            help="crawl output folders, corpus folders, or folders above them")
    forget_cmd.add_argument("--account", action="append", default=[], metavar="HANDLE@INSTANCE",
                            help="the person's account, e.g. alice@chaos.social; repeatable")
    forget_cmd.add_argument("--url", action="append", default=[], metavar="URL",
                            help="a link to one of their posts, or to their profile; repeatable")
    forget_cmd.add_argument("--key-file", type=path_arg, metavar="PATH",
                            help=f"the crawl key (default: ${KEY_ENV}, else {default_key_file()})")
    forget_cmd.set_defaults(func=run_forget)


def run_taz(args: argparse.Namespace) -> int:
    since = args.since_year if args.since_year is not None else default_since_year()
    args.output = output_path(args.output, args.paths, option="--output", file=True)
    reader = TazReader(KeywordMatcher(DEFAULT_KEYWORDS), since_year=since,
                       until_year=args.until_year, bad=BadRecords(skip=args.skip_bad))
    with atomic_open(args.output) as out:
        for document in reader.read(args.paths):
            out.write(dumps_line(document.to_dict()))
    counts = dict(reader.counts, bad_records=reader.bad.count)
    print(f"wrote {reader.counts['kept']} articles ({since}-{args.until_year or 'today'}) "
          f"to {args.output}: {json.dumps(counts)}")
    for example in reader.bad.examples:
        print(f"  skipped: {example}")
    return 0


def _parse_sources(values: list[str]) -> list[SourceSpec]:
    specs = []
    for value in values:
        name, sep, path = value.partition("=")
        if not (path if sep else value).strip():  # Path('') would be the working folder
            raise QueerbiasError(f"--source {value!r}: names no file; give [NAME=]PATH")
        specs.append(SourceSpec(path=Path(path), name=name) if sep else SourceSpec(path=Path(value)))
    return specs


def _parse_min_words(values: list[str]) -> dict[str, int]:
    result = {}
    for value in values:
        kind, _, number = value.partition("=")
        if kind not in MIN_WORDS or not number.isdigit():
            raise QueerbiasError(f"--min-words expects KIND=N with KIND in {list(MIN_WORDS)}, "
                                 f"got {value!r}")
        result[kind] = int(number)
    return result


def config_from_args(args: argparse.Namespace) -> BuildConfig:
    """The manifest's config (if any) with command-line options applied on top."""
    if args.manifest:
        config = load_manifest(args.manifest)
        config.sources += _parse_sources(args.source)
    else:
        if args.name is not None and (not args.name.strip() or "/" in args.name or args.name in (".", "..")):
            raise QueerbiasError(f"--name {args.name!r}: a corpus name is one folder name (corpora/NAME); "
                                 "give a name without '/'")
        # -o DIR alone names the corpus after its folder, as --name alone puts it in corpora/NAME
        name = args.name or (Path(args.output).resolve().name if args.output else None)
        if not args.source or not name:
            raise QueerbiasError("corpus build needs --manifest, or --source with --name or -o DIR "
                                 "(the corpus is named after the folder)")
        config = BuildConfig(name=name, output_dir=args.output or CORPORA_DIR / name,
                             sources=_parse_sources(args.source))
    overrides = {
        "name": args.name, "output_dir": args.output, "seed": args.seed,
        "validation_fraction": args.validation_fraction, "opt_out": args.opt_out,
        "near_duplicate_threshold": args.near_duplicate_threshold, "max_crawl_age_days": args.max_crawl_age,
        "key_file": args.key_file,
    }
    for key, value in overrides.items():
        if value is not None:
            setattr(config, key, value)
    if args.name and not args.output and args.manifest:
        config.output_dir = CORPORA_DIR / args.name
    config.min_words.update(_parse_min_words(args.min_words))
    if args.no_near_duplicates:
        config.near_duplicate_threshold = None
    if args.all_languages:
        config.require_german = False
    config.skip_bad = config.skip_bad or args.skip_bad
    config.allow_stale = config.allow_stale or args.allow_stale
    config.validate()
    return config


def run_build(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    output_path(config.output_dir, [args.manifest], option="corpus output folder", kind=CORPUS)
    stats = CorpusBuilder(config).run()
    totals, dropped = stats["totals"], stats["dropped"]
    print(f"{config.name}: {totals['documents']} documents, {totals['words']} words, "
          f"{totals['mb']} MB -> {config.output_dir} (train {stats['splits']['train']['documents']}, "
          f"validation {stats['splits']['validation']['documents']}); dropped {json.dumps(dropped)}")
    return 0


def run_forget(args: argparse.Namespace) -> int:
    if not args.account and not args.url:
        raise QueerbiasError("corpus forget needs --account HANDLE@INSTANCE or --url URL")
    key = CrawlKey.existing(args.key_file or default_key_file(), outputs=tuple(args.folders))
    takedown = forget(args.folders, key, args.account, args.url)
    for line in takedown.lines:
        print(line)
    if takedown.undone:
        raise QueerbiasError(f"{len(takedown.undone)} folder(s) not done, run the same command again: "
                             + "; ".join(takedown.undone))
    return 0
