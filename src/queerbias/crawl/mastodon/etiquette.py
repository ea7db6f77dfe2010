"""Whether an instance's admin is willing to be crawled, from what they published.

An instance is skipped, and the reason printed, when it is on the deny-list (the
project's list of admins who asked us to stay away, plus any `--deny-list` file),
when its robots.txt shuts our agent (or every agent) out of the API or cannot be read,
when it shuts out the AI-training crawlers (GPTBot and the like; Mastodon ships that by
default: this corpus trains language models, and silence is not consent), or when its
rules mention AI or scraping. A feed whose path robots.txt closes to either is not paged,
and feeds an admin made login-only are not crawled with a token either. Everything but the
deny-list yields to `--allow-instance`, which says that this admin agreed explicitly; the
crawler records each refusal it overrode under the instance's `admin_agreed`.
"""

from __future__ import annotations

import csv
import re
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

from queerbias.crawl.canonical import canonical_netloc
from queerbias.crawl.inputs import read_small_text
from queerbias.crawl.mastodon.probe import ROBOTS_DISALLOW, ROBOTS_UNREACHABLE, ProbeResult
from queerbias.crawl.mastodon.records import uri_host
from queerbias.crawl.quoting import quote
from queerbias.errors import DataError

SHIPPED_DENY_LIST = "data/crawl/instance-deny-list.txt"
_AI_WORDS = re.compile(
    r"künstliche\w* intelligenz|artificial intelligence|machine learning|maschinell\w* lern\w*"
    r"|sprachmodell\w*|language models?|trainingsdaten|training data|\btrain(?:ing|ed)? (?:of |on )?(?:an? )?(?:ai|ki)\b"
    r"|scrap(?:e|er|ers|ing|en|t)\b|crawl(?:er|ers|ing|en|t)?\b|data[ -]?mining|text[ -]und[ -]data[ -]mining"
    r"|datensammel\w*|datenabgriff\w*",
    re.IGNORECASE)
_AI_ACRONYMS = re.compile(r"(?<![\w.])(?:AI|KI|LLMs?|GPT|ML)(?![\w])")


def rule_against_ai(rules: list[str]) -> str | None:
    """The first rule that mentions AI, training, scraping or crawling, or None."""
    for rule in rules:
        if _AI_WORDS.search(rule) or _AI_ACRONYMS.search(rule):
            return rule
    return None


# A canonical `host[:port]`: labels of letters, digits, `_` and `-`, or an IPv6 literal.
_NETLOC = re.compile(r"(?:(?:[a-z0-9_](?:[a-z0-9_\-]*[a-z0-9_])?\.)*[a-z0-9_](?:[a-z0-9_\-]*[a-z0-9_])?"
                     r"|\[[0-9a-f:.]+\])(?::\d{1,5})?")


def _hosts(text: str, source: str) -> set[str]:
    """The hosts of a deny-list: ours (one `host`, `host:port` or URL a line, `#` comments) or Mastodon's own
    CSV export of domain blocks (a `#domain,#severity,...` header, then one block a row, the host first).
    Every host is canonical (`canonical.canonical_netloc`); an entry that is no host name is refused, naming
    its row."""
    hosts = set()
    for row, line in enumerate(text.splitlines(), 1):
        entry = line.split("#", 1)[0]
        entry = next(csv.reader([entry]), [""])[0].strip() if entry.strip() else ""
        if not entry:
            continue
        try:
            parts = urlsplit(entry if "://" in entry else f"https://{entry}")
            host = canonical_netloc(parts.netloc, parts.scheme.lower())
        except ValueError:  # `[::1`, say
            parts, host = None, ""
        if parts is None or "@" in parts.netloc or parts.path not in ("", "/") or not _NETLOC.fullmatch(host):
            raise DataError(source, f"not a host name: {quote(entry, 80)!r}", row=row, field="domain")
        hosts.add(host)
    return hosts


def load_deny_list(extra: list[Path] = ()) -> frozenset[str]:
    """The shipped deny-list plus the hosts in `extra` files (see `_hosts`)."""
    hosts = _hosts(resources.files("queerbias").joinpath(SHIPPED_DENY_LIST).read_text(encoding="utf-8"),
                   SHIPPED_DENY_LIST)
    for path in extra:
        hosts |= _hosts(read_small_text(path, "deny-list"), str(path))
    return frozenset(hosts)


def is_denied(netloc: str, deny_list: frozenset[str]) -> bool:
    """Whether `netloc` (host or host:port, in any spelling), or a domain above its host, is on the deny-list
    (whose hosts are canonical)."""
    netloc = canonical_netloc(netloc)
    name = urlsplit(f"//{netloc}").hostname or netloc
    return any(netloc == d or name == d or name.endswith("." + d) for d in deny_list)


def written_on_denied(uri: str, handle: str, deny_list: frozenset[str]) -> bool:
    """Whether a post's uri or its author's `user@domain` names a deny-listed instance. Both are asked: a
    server may spell the uri's host so that it matches no entry, while the account's domain still does."""
    return is_denied(uri_host(uri), deny_list) or is_denied(handle.rpartition("@")[2], deny_list)


def refusal(probe: ProbeResult) -> str | None:
    """Why the probed instance is not to be crawled unless its admin agreed explicitly, or None."""
    if probe.robots == ROBOTS_DISALLOW:
        return "its robots.txt disallows our crawler at the API"
    if probe.robots == ROBOTS_UNREACHABLE:
        return "its robots.txt could not be read, so its wishes are unknown; rerun later"
    if probe.ai_crawlers_disallowed:
        return ("its robots.txt disallows AI-training crawlers (GPTBot and the like), and this corpus trains "
                "language models")
    rule = rule_against_ai(probe.rules)
    if rule:
        return f"its rules mention AI or scraping: {rule!r}"
    return None
