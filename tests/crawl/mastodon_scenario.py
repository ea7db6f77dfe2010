"""Two fake instances that share posts, plus helpers to run the crawler against them.

Not a conftest.py: tests/crawl is shared with other crawlers, whose tests need none of this.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from queerbias.crawl.mastodon.client import RetryPolicy
from queerbias.crawl.mastodon.crawler import crawl
from queerbias.crawl.mastodon.refresh import refresh
from queerbias.crawl.mastodon.settings import CrawlSettings
from queerbias.crawl.mastodon.testserver import FakeInstance, FakeMastodonServer, Fediverse, status

T0 = datetime(2024, 5, 1, 12, tzinfo=timezone.utc)
UA = "queerbias-test/1.0 (tests; contact: me@example.org)"
# Every name that must never reach an output file: usernames (so handles too) and uri paths.
PEOPLE = ("alice", "bob", "carla", "booster", "botty", "quiet", "hidden", "nobot", "/users/", "/statuses/", "/@")
SHARED_URI = "https://a.example/users/alice/statuses/1100"
BOOSTED_URI = "https://c.example/users/carla/statuses/9007"
GERMAN = "Heute waren wir beim CSD und haben mit vielen queeren Menschen gefeiert, es war wunderschön."


def _at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def instance_a() -> FakeInstance:
    """a.example: 30 plain German posts on #queer (several pages) and every kind of post to drop."""
    d = "a.example"
    posts = [status(1000 + i, f"<p>Beitrag {i}: {GERMAN}</p>", domain=d, created=_at(i), tags=("queer",),
                    uri=f"https://a.example/users/alice/statuses/{1000 + i}")
             for i in range(30)]
    posts += [
        status(1100, f"<p>{GERMAN}</p>", domain=d, created=_at(100), tags=("queer",), uri=SHARED_URI),
        status(1101, f"<p>Ich bin ein Bot. {GERMAN}</p>", domain=d, created=_at(101), tags=("queer",),
               username="botty", bot=True),
        status(1102, f"<p>{GERMAN} <a href='https://a.example/tags/nsfw'>#<span>nsfw</span></a></p>", domain=d,
               created=_at(102), tags=("queer", "nsfw")),
        status(1103, f"<p>{GERMAN}</p>", domain=d, created=_at(103), tags=("queer",), username="quiet",
               indexable=False),
        status(1104, f"<p>{GERMAN}</p>", domain=d, created=_at(104), tags=("queer",), username="hidden",
               noindex=True),
        status(1105, f"<p>{GERMAN}</p>", domain=d, created=_at(105), tags=("queer",), username="nobot",
               note="<p>Bitte keine Crawler <a href='#'>#NoBot</a></p>"),
        status(1106, "<p>Today we celebrated pride with so many queer people, it was wonderful.</p>", domain=d,
               created=_at(106), tags=("queer",), language="en"),
        status(1107, "<p>Der Transport der Bühne für das Fest am Samstag hat leider viel länger gedauert.</p>",
               domain=d, created=_at(107), tags=("queer",)),
        status(1108, "<p>Geplante Wartungsarbeiten: der Server ist heute Nacht nicht erreichbar. #queer</p>",
               domain=d, created=_at(108), tags=("queer",), username="admin"),
        status(1109, "<p>Ich bin nichtbinär und lebe seit Jahren offen so in meiner Stadt, es ist gut.</p>",
               domain=d, created=_at(109), tags=("nichtbinär",)),
        status(1110, '<p>Hallo <span class="h-card"><a href="https://b.example/@bob" class="u-url mention">@'
                     '<span>bob</span></a></span> schau mal: <a href="https://example.org/x/y">'
                     '<span class="invisible">https://</span><span>example.org/x/y</span></a> :blobcat: 🏳️‍🌈 '
                     'Queere Geschichte in Köln ist spannend und wird viel zu selten erzählt.</p>'
                     '<p><a class="mention hashtag" href="https://a.example/tags/queer">#<span>queer</span></a> '
                     '#fediverse #mastodon</p>',
               domain=d, created=_at(110), tags=("queer", "fediverse", "mastodon")),
        status(1111, f"<p>{GERMAN}</p>", domain=d, created=_at(111), tags=("queer",), spoiler="CW: Gefühle"),
    ]
    return FakeInstance(d, posts)


def carla_original(local_id: int = 9007, acct: str = "carla@c.example") -> dict:
    return status(local_id, f"<p>Lesbische Sichtbarkeit ist wichtig. {GERMAN}</p>", domain="c.example",
                  created=_at(200), acct=acct, username="carla", uri=BOOSTED_URI, tags=("queer",))


def instance_b() -> FakeInstance:
    """b.example: the shared post under another local id, and a boost of a post from a third server."""
    d = "b.example"
    original = carla_original(local_id=5900)
    return FakeInstance(d, [
        status(5001, f"<p>{GERMAN}</p>", domain=d, created=_at(100), acct="alice@a.example", tags=("queer",),
               uri=SHARED_URI),
        status(5002, "", domain=d, created=_at(201), username="booster", tags=("queer",), reblog=original),
        status(5003, f"<p>Ein schwuler Abend im Kiez. {GERMAN}</p>", domain=d, created=_at(202),
               username="bob", tags=("queer",)),
    ])


def instance_c() -> FakeInstance:
    """c.example: carla's own server, the origin of the post b.example boosts; not crawled by default."""
    return FakeInstance("c.example", [carla_original(acct="carla")])


@pytest.fixture
def servers():
    """a.example and b.example (crawled), with c.example running as the boosted post's origin."""
    fediverse = Fediverse()
    with FakeMastodonServer(instance_a(), fediverse) as a, FakeMastodonServer(instance_b(), fediverse) as b, \
            FakeMastodonServer(instance_c(), fediverse):
        yield a, b


class Sleeps(list):
    """Injected `sleep`: records the requested waits instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def settings(out: Path, *urls: str, **overrides) -> CrawlSettings:
    return CrawlSettings(**{"out_dir": out, "instances": tuple(urls), "tags": ("queer", "nichtbinär"),
                            "page_size": 10, "user_agent": UA, **overrides})


POLICY = RetryPolicy(max_attempts=3, backoff_base=0.5)


def run_crawl(out: Path, *urls: str, sleeps: Sleeps | None = None, **overrides) -> dict:
    return crawl(settings(out, *urls, **overrides), policy=POLICY, sleep=sleeps if sleeps is not None else Sleeps())


def later(days: int = 1):
    """A clock `days` after now: a refresh pass that starts after everything was crawled."""
    return lambda: datetime.now(timezone.utc) + timedelta(days=days)


def run_refresh(out: Path, sleeps: Sleeps | None = None, clock=None, **overrides) -> dict:
    return refresh(settings(out, **overrides), policy=POLICY, sleep=sleeps if sleeps is not None else Sleeps(),
                   clock=clock or later())


def read_posts(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "posts.jsonl").read_text(encoding="utf-8").splitlines()]


def _readable(path: Path) -> str:
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.name == "reid.jsonl":  # ciphertext in base64 may spell "bob" by chance; check the rest
        text = "".join(json.dumps({**json.loads(line), "sealed": ""}) for line in text.splitlines())
    if path.name == "tombstones.json":
        text = json.dumps({**json.loads(text), "sealed": ""})
    return text


def output_text(*folders: Path) -> str:
    """Every file under `folders`, as text: what a handle must not appear in."""
    return "".join(_readable(p) for folder in folders for p in sorted(folder.rglob("*")) if p.is_file())


def assert_names_nobody(*folders: Path, extra: tuple[str, ...] = ()) -> None:
    text = output_text(*folders)
    for name in PEOPLE + extra:
        assert name not in text, f"{name!r} found in the outputs"
