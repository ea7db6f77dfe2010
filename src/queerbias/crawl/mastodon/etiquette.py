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

import re
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

from queerbias.crawl.hosts import normalise_netloc
from queerbias.crawl.inputs import read_small_text
from queerbias.crawl.mastodon.probe import ROBOTS_DISALLOW, ROBOTS_UNREACHABLE, ProbeResult
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


def _hosts(text: str, source: str) -> set[str]:
    hosts = set()
    for row, line in enumerate(text.splitlines(), 1):
        entry = line.split("#", 1)[0].strip().lower()
        if not entry:
            continue
        host = normalise_netloc(urlsplit(entry if "://" in entry else f"https://{entry}").netloc)
        if not host or "@" in host:
            raise DataError(source, f"not a host name: {entry!r}", row=row)
        hosts.add(host)
    return hosts


def load_deny_list(extra: list[Path] = ()) -> frozenset[str]:
    """The shipped deny-list plus the hosts in `extra` files (one host, or host:port, per line; '#' comments)."""
    hosts = _hosts(resources.files("queerbias").joinpath(SHIPPED_DENY_LIST).read_text(encoding="utf-8"),
                   SHIPPED_DENY_LIST)
    for path in extra:
        hosts |= _hosts(read_small_text(path, "deny-list"), str(path))
    return frozenset(hosts)


def is_denied(netloc: str, deny_list: frozenset[str]) -> bool:
    """Whether `netloc` (host or host:port, in any spelling), or a domain above its host, is on the deny-list
    (whose hosts are A-labels)."""
    netloc = normalise_netloc(netloc)
    name = urlsplit(f"//{netloc}").hostname or netloc
    return any(netloc == d or name == d or name.endswith("." + d) for d in deny_list)


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
