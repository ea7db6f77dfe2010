"""Issue 48, news: an opt-out reaches an article by every address it was found at, in the canonical form
(tracking parameters dropped); a news crawl's folder is built from as it is; a site that serves only the address
its feed published is asked for that address.

Small web sites on 127.0.0.1, the real news crawler, the real corpus build and real files.
"""

from __future__ import annotations

import json
import shutil

import pytest
from mastodon_scenario import UA
from websites import Site, article, rss

from queerbias.cli import main


def _crawl_news(out, site: Site) -> int:
    return main(["crawl", "news", "--out", str(out), "--delay", "0", "--user-agent", UA,
                 "--allow-private-host", site.host, "--feed", site.base + "/feed.xml"])


def _build(source, out, *extra) -> dict:
    assert main(["corpus", "build", "--name", "n", "--source", str(source), "-o", str(out), "--no-near-duplicates",
                 *extra]) == 0
    return json.loads((out / "stats.json").read_text())


@pytest.fixture
def crawled(tmp_path):
    """A news crawl (in `tmp_path/news`) of three articles whose feed links a script (`/index.php?id=N`) and whose
    pages name their canonical address (`/artikel/N.html`); yields the site's base and the records."""
    news = tmp_path / "news"
    with Site() as site:
        for n in (7, 8, 9):
            canonical = f'<link rel="canonical" href="{site.base}/artikel/{n}.html">'
            site.routes[f"/index.php?id={n}"] = (200, {}, article(f"Queere Jugendzentren {n}", canonical))
        site.routes["/feed.xml"] = (200, {"Content-Type": "application/rss+xml"},
                                    rss([(str(n), f"/index.php?id={n}") for n in (7, 8, 9)]))
        assert _crawl_news(news, site) == 0
    records = [json.loads(line) for line in (news / "news.jsonl").read_text().splitlines()]
    assert [r["url"] for r in records] == [f"{site.base}/artikel/{n}.html" for n in (7, 8, 9)]
    return site.base, records


def _opted_out(tmp_path, lines: str) -> int:
    """How many articles a build from a copy of the crawl's news.jsonl drops for the opt-out list `lines`."""
    (tmp_path / "copy").mkdir()
    shutil.copy(tmp_path / "news" / "news.jsonl", tmp_path / "copy" / "news.jsonl")
    (tmp_path / "opt-out.txt").write_text(lines)
    stats = _build(tmp_path / "copy" / "news.jsonl", tmp_path / "corpus", "--opt-out", str(tmp_path / "opt-out.txt"))
    return stats["dropped"]["opted_out"]


def test_an_opt_out_reaches_an_article_by_the_link_its_feed_gave(crawled, tmp_path):
    base, _ = crawled
    assert _opted_out(tmp_path, f"{base}/index.php?id=7\n") == 1  # kept in the record's provenance


def test_an_opt_out_with_tracking_parameters_matches_the_article_without_them(crawled, tmp_path):
    base, _ = crawled
    assert _opted_out(tmp_path, f"{base.upper()}/artikel/8.html?utm_source=newsletter&utm_medium=mail\n") == 1


def test_a_news_crawls_own_folder_is_built_from(crawled, tmp_path):
    _, records = crawled
    stats = _build(tmp_path / "news" / "news.jsonl", tmp_path / "corpus")  # its state.json is no Mastodon store's
    assert stats["inputs"][0]["documents_read"] == len(records)


def test_a_site_that_serves_only_the_published_address_is_asked_for_it(tmp_path, capsys):
    with Site() as site:
        site.routes["/c.html?utm_source=feed"] = (200, {}, article("Queere Jugendzentren"))  # and /c.html is a 404
        site.routes["/feed.xml"] = (200, {"Content-Type": "application/rss+xml"},
                                    rss([("c", "/c.html?utm_source=feed")]))
        assert _crawl_news(tmp_path, site) == 0
        asked = [path for path in site.requests if path.startswith("/c.html")]
    assert asked == ["/c.html", "/c.html?utm_source=feed"]  # without tracking parameters first
    [record] = [json.loads(line) for line in (tmp_path / "news.jsonl").read_text().splitlines()]
    assert record["provenance"]["link"] == site.base + "/c.html"  # identified without them
    assert '"kept": 1' in capsys.readouterr().out
