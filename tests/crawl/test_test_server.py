"""The local Mastodon test instance a user can start (`queerbias crawl test-server`), and the crawl's
progress: a bar on a terminal, nothing in logs and pipes, each instance's line as soon as it ends."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from queerbias.cli import main

UA = "queerbias-test/1.0 (tests; contact: me@example.org)"
ROOT = Path(__file__).resolve().parents[2]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_test_server_starts_from_the_command_line_and_a_crawl_shows_its_progress(tmp_path, monkeypatch, capsys):
    server = subprocess.Popen([sys.executable, "-m", "queerbias.crawl.mastodon.testserver", "--posts", "45"],
                              stdout=subprocess.PIPE, text=True)
    try:
        url = re.search(r"http://127\.0\.0\.1:\d+", server.stdout.readline()).group(0)
        args = ["crawl", "mastodon", "--instance", url, "--tag", "queer", "--user-agent", UA]
        terminal = _Terminal()
        monkeypatch.setattr(sys, "stderr", terminal)
        assert main([*args, "--out", str(tmp_path / "tty")]) == 0
        bar = terminal.getvalue()
        assert "crawl mastodon" in bar and "page" in bar and "kept 45" in bar and "instances 1/1" in bar
        printed = capsys.readouterr().out
        assert f"{url}: complete; fetched 51, kept 45" in printed  # 45 posts, and one of each kind dropped
        assert "dropped: automated 1, bot 1, not_german 1, nsfw 1, opted_out 2" in printed

        piped = io.StringIO()
        monkeypatch.setattr(sys, "stderr", piped)
        assert main([*args, "--out", str(tmp_path / "log")]) == 0
        assert "crawl mastodon" not in piped.getvalue() and "page" not in piped.getvalue()
    finally:
        server.terminate()
        server.wait()


def test_the_test_server_is_a_crawl_subcommand_and_documented(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["crawl", "test-server", "--help"])
    assert exit_.value.code == 0 and "Mastodon test instance" in capsys.readouterr().out
    for doc in ("README.md", "docs/crawl-mastodon.md"):
        assert "queerbias crawl test-server" in (ROOT / doc).read_text(encoding="utf-8"), doc
