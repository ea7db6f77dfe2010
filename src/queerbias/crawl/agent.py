"""The User-Agent both crawlers send: who crawls, why, and how to reach them.

An admin or site owner who sees our requests must be able to object. A User-Agent
without a contact gives them nobody to write to, so neither crawler runs without one:
pass `--contact you@uni.example` (or a URL), or a whole `--user-agent` that contains an
e-mail address or an http(s) URL.

robots.txt groups are matched against the agent's own product token and, whatever
`--user-agent` says, against the project's tokens that admins are told to block
(`PROJECT_AGENTS`), and the AI-training crawlers' groups (`AI_TRAINING_AGENTS`) bind us
too: our texts train language models, and an admin who shut those out has said no.
"""

from __future__ import annotations

import re
import unicodedata

from queerbias import __version__
from queerbias.errors import QueerbiasError

_EMAIL = re.compile(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)*\.[A-Za-z]{2,}")
_URL = re.compile(r"https?://[\w\-]+(?:\.[\w\-]+)+")
# Crawlers that collect text to train AI models, by the robots.txt tokens their operators publish
# (OpenAI GPTBot, Common Crawl CCBot, Google-Extended, Applebot-Extended, Anthropic ClaudeBot and
# anthropic-ai, Meta meta-externalagent, ByteDance Bytespider, cohere-training-data-crawler).
AI_TRAINING_AGENTS = ("GPTBot", "CCBot", "Google-Extended", "Applebot-Extended", "ClaudeBot", "anthropic-ai",
                      "meta-externalagent", "Bytespider", "cohere-training-data-crawler")
PURPOSES = {
    "queerbias-crawler": "research corpus on anti-LGBTQ+ bias in German language models",
    "queerbias-news": "research crawler collecting German news about LGBTQ+ topics for "
                      "language-model bias studies",
}


def has_contact(user_agent: str) -> bool:
    """Whether `user_agent` carries an e-mail address or a web address."""
    return bool(_EMAIL.search(user_agent) or _URL.search(user_agent))


def build_user_agent(product: str, contact: str | None, user_agent: str | None) -> str:
    """`user_agent` as given, or `product/version (purpose; contact: ...)`; refused without a contact."""
    if user_agent is None:
        if not contact or not has_contact(contact):
            raise QueerbiasError(f"{product} needs a contact so that admins can reach you: pass --contact "
                                 "with your e-mail address or a web page about the project")
        user_agent = f"{product}/{__version__} ({PURPOSES[product]}; contact: {contact.strip()})"
    require_contact(user_agent)
    return user_agent


def require_contact(user_agent: str) -> None:
    """Refuse a User-Agent that gives admins no one to write to, or that holds a control character
    (a CR or LF from --contact): a header is one line, and every request would fail and be retried."""
    control = next((c for c in user_agent if unicodedata.category(c) == "Cc"), None)
    if control is not None:
        raise QueerbiasError(f"the User-Agent {user_agent[:120]!r} holds the control character {control!r}; an HTTP "
                             "header is one line of text: remove it from --contact or --user-agent")
    if not has_contact(user_agent):
        raise QueerbiasError(f"the User-Agent {user_agent[:120]!r} has no contact; add your e-mail address or "
                             "a web page (--contact, or inside --user-agent)")


PROJECT_AGENTS = tuple(PURPOSES)


def agent_token(user_agent: str) -> str:
    """The product token robots.txt groups are matched against (`queerbias-news/0.1 (...)` -> `queerbias-news`)."""
    return user_agent.split("/", 1)[0].split()[0].strip().lower() if user_agent.strip() else ""


def our_agents(user_agent: str) -> tuple[str, ...]:
    """The robots.txt tokens that speak for us: the User-Agent's own and the project's."""
    return tuple(dict.fromkeys(a for a in (agent_token(user_agent), *PROJECT_AGENTS) if a))
