"""robots.txt read as RFC 9309 says, for both crawlers.

The rules are parsed and matched by Protego, the parser Scrapy uses: longest match wins,
an allow wins a tie (2.2.2), `*` and `$` (2.2.3), percent-encoding compared as the RFC's
table says, groups for the same agent combined (2.2.1), `/robots.txt` always allowed.
Two things it reads differently from the RFC are settled here first:

- a byte-order mark before the first line is removed (Protego would read
  `\\ufeffUser-agent` as an unknown line and lose the first group);
- a user-agent line names a product token (2.2.1: letters, `_` and `-`), so
  `User-agent: queerbias-crawler/0.1` is cut to `queerbias-crawler`, and groups that
  name one agent in different spellings combine. An agent then takes the group that
  names its product token exactly (case-insensitively), else the `*` group: Protego alone
  would also let a group `queerbias` bind `queerbias-crawler`.

`pattern_covers` is the same path matching for other files that use it (TDMRep's
`location`).
"""

from __future__ import annotations

import re

from protego import Protego

_AGENT_LINE = re.compile(r"^(\s*user[ -]?agent\s*:\s*)([^#\r\n]*)", re.IGNORECASE | re.MULTILINE)
_PRODUCT_TOKEN = re.compile(r"[A-Za-z_\-]+")
_NO_GROUP = "%"  # cannot contain a product token: matches only the `*` group


def _product_token(value: str) -> str:
    value = value.strip()
    if value == "*":
        return value
    token = _PRODUCT_TOKEN.match(value)
    return token.group(0).lower() if token else ""


class RobotsRules:
    """The parsed robots.txt of one origin."""

    def __init__(self, text: str):
        text = text.lstrip("\ufeff")
        self.groups: set[str] = set()

        def token_line(match: re.Match) -> str:
            token = _product_token(match.group(2))
            self.groups.add(token)
            return match.group(1) + token

        self._parser = Protego.parse(_AGENT_LINE.sub(token_line, text))

    @classmethod
    def from_bytes(cls, body: bytes, charset: str | None = None) -> RobotsRules:
        """From the bytes of a robots.txt answer: UTF-8 (the RFC's encoding) unless another charset is declared."""
        try:
            text = body.decode(charset or "utf-8-sig", errors="replace")
        except LookupError:  # a charset Python does not know
            text = body.decode("utf-8-sig", errors="replace")
        return cls(text)

    def _agent(self, agent: str) -> str:
        token = _product_token(agent)
        return token if token and token in self.groups else _NO_GROUP

    def allowed(self, agent: str, url: str) -> bool:
        """Whether the group for `agent`'s product token (else `*`) lets it fetch `url` (a URL or a path)."""
        return self._parser.can_fetch(url, self._agent(agent))

    def crawl_delay(self, agent: str) -> float:
        """The Crawl-delay of `agent`'s group in seconds (0 when none is set)."""
        try:
            return float(self._parser.crawl_delay(self._agent(agent)) or 0)
        except (TypeError, ValueError):
            return 0.0


def pattern_covers(pattern: str, path: str) -> bool:
    """Whether a robots.txt path pattern (a prefix, with `*` and a final `$`) covers `path`."""
    pattern = re.split(r"[\r\n#]", pattern, maxsplit=1)[0].strip()  # one line, no comment
    if not pattern:
        return False
    rules = Protego.parse(f"User-agent: *\nDisallow: {pattern if pattern.startswith(('/', '*')) else '/' + pattern}\n")
    return not rules.can_fetch(path or "/", "*")
