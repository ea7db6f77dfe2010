"""`queerbias crawl mastodon` end to end: tokens, errors, and a SIGKILL in the middle of a crawl."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from fake_mastodon import FakeInstance, FakeMastodonServer, status
from mastodon_scenario import GERMAN, T0, read_posts

from queerbias.cli import main

REPO = Path(__file__).resolve().parents[2]
TOKEN = "s3cr3t-T0KEN-do-not-leak"


def _posts(domain: str, n: int, tag: str = "queer") -> list[dict]:
    return [status(100 + i, f"<p>Nr. {i}: {GERMAN}</p>", domain=domain, created=T0 + timedelta(minutes=i),
                   tags=(tag,)) for i in range(n)]


def test_token_goes_to_its_instance_only_and_is_never_written(tmp_path, monkeypatch, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("QUEERBIAS_MASTODON_TOKEN", TOKEN)
    private = FakeInstance("login.example", _posts("login.example", 3), hashtag_feeds="authenticated", token=TOKEN)
    public = FakeInstance("open.example", _posts("open.example", 2))
    with FakeMastodonServer(private) as c, FakeMastodonServer(public) as a:
        rc = main(["-v", "crawl", "mastodon", "--out", str(tmp_path), "--instance", c.url, "--instance", a.url,
                   "--token-instance", c.url, "--tag", "queer", "--user-agent", "test-crawler (me@example.org)"])
        assert rc == 0
        assert all(r["headers"].get("Authorization") == f"Bearer {TOKEN}" for r in c.requests)
        assert not any("Authorization" in r["headers"] for r in a.requests)
        assert {r["headers"]["User-Agent"] for r in a.requests} == {"test-crawler (me@example.org)"}
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["instances"][c.url]["probe"]["hashtag_feeds"] == "public"  # public for us, with the token
    assert stats["posts"] == 5
    out = capsys.readouterr()
    written = "".join(p.read_text(errors="replace") for p in tmp_path.iterdir())
    for text in (written, out.out, out.err, caplog.text):
        assert TOKEN not in text


def test_token_file_and_single_instance(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    private = FakeInstance("login.example", _posts("login.example", 3), hashtag_feeds="authenticated", token=TOKEN)
    with FakeMastodonServer(private) as c:
        assert main(["crawl", "mastodon", "--out", str(tmp_path / "out"), "--instance", c.url, "--tag", "queer",
                     "--token-file", str(token_file)]) == 0
    assert len(read_posts(tmp_path / "out")) == 3


@pytest.mark.parametrize("args, message", [
    (["--tag", "trans mann"], "not a hashtag: 'trans mann'"),
    (["--instance", "ftp://x.example"], "not an instance URL"),
    (["--instance", "a.example", "--instance", "b.example", "--token-file", "{token}"], "--token-instance"),
    (["--token-file", "{missing}"], "cannot read token file"),
    (["--max-requests", "0"], "--max-requests must be at least 1"),
])
def test_user_errors_are_one_line(tmp_path, capsys, args, message):
    (tmp_path / "token").write_text(TOKEN)
    args = [a.format(token=tmp_path / "token", missing=tmp_path / "missing") for a in args]
    assert main(["crawl", "mastodon", "--out", str(tmp_path / "out"), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and err.startswith("queerbias crawl: error:")
    assert TOKEN not in err


def test_all_instances_unreachable_is_an_error(tmp_path, capsys):
    with FakeMastodonServer(FakeInstance("gone.example")) as gone:
        url = gone.url
    # Real backoff sleeps would make this slow; one attempt per request is enough to fail.
    assert main(["crawl", "mastodon", "--out", str(tmp_path), "--instance", url, "--max-requests", "1"]) == 2
    assert "no instance could be crawled" in capsys.readouterr().err


def _crawl_process(out: Path, *urls: str) -> subprocess.Popen:
    args = [sys.executable, str(REPO / "crawl" / "mastodon.py"), "--out", str(out), "--tag", "queer",
            "--tag", "nichtbinär", "--user-agent", "test (me@example.org)"]
    for url in urls:
        args += ["--instance", url]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_sigkill_mid_crawl_then_rerun_loses_and_duplicates_nothing(tmp_path):
    a = FakeInstance("a.example", _posts("a.example", 150) + _posts("a.example", 30, tag="nichtbinär")[::-1])
    for i, post in enumerate(a.statuses[150:]):  # distinct ids and uris for the #nichtbinär posts
        post["id"], post["uri"] = str(1000 + i), f"https://a.example/users/alice/statuses/{1000 + i}"
    b = FakeInstance("b.example", _posts("b.example", 60))
    with FakeMastodonServer(a) as sa, FakeMastodonServer(b) as sb:
        reference = _crawl_process(tmp_path / "ref", sa.url, sb.url)
        assert reference.wait(timeout=60) == 0, reference.stderr.read().decode()
        expected = read_posts(tmp_path / "ref")
        assert len(expected) == 240

        out = tmp_path / "out"
        sa.pause_after_timeline_requests(len(sa.timeline_requests()) + 3)  # hold a's 4th page of this run
        victim = _crawl_process(out, sa.url, sb.url)
        assert sa.paused.wait(timeout=60)
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=10)
        sa.resume()
        partial = read_posts(out)
        assert 0 < len(partial) < len(expected)
        state = json.loads((out / "state.json").read_text())
        assert state["records"] == len(partial)
        assert state["instances"][sa.url]["cursors"]["tag:queer"]["pass_max_id"]

        rerun = _crawl_process(out, sa.url, sb.url)
        stdout, stderr = rerun.communicate(timeout=60)
        assert rerun.returncode == 0, stderr.decode()
    posts = read_posts(out)
    assert posts[: len(partial)] == partial
    assert sorted(p["uri"] for p in posts) == sorted(p["uri"] for p in expected)
    assert len({p["doc_id"] for p in posts}) == len(posts)
