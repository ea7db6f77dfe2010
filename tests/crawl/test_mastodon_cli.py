"""`queerbias crawl mastodon` end to end: tokens, errors, and processes that are killed, interrupted,
run twice at once, starved of memory or of disk space."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import zlib
from collections import Counter
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from mastodon_scenario import GERMAN, T0, read_posts

from queerbias.cli import main
from queerbias.crawl.mastodon.testserver import FakeInstance, FakeMastodonServer, status

REPO = Path(__file__).resolve().parents[2]
TOKEN = "s3cr3t-T0KEN-do-not-leak"
UA = ["--user-agent", "test-crawler (me@example.org)"]
# How long a test waits for a crawl process before calling it hung: a net against a hang, not a measure of
# speed (a crawl that works needs seconds, even on a loaded machine; one that hangs never ends).
HANG = 120


def _posts(domain: str, n: int, tag: str = "queer", start: int = 100) -> list[dict]:
    return [status(start + i, f"<p>Nr. {i}: {GERMAN}</p>", domain=domain, created=T0 + timedelta(minutes=i),
                   tags=(tag,)) for i in range(n)]


def test_token_goes_to_its_instance_only_and_is_never_written(tmp_path, monkeypatch, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("QUEERBIAS_MASTODON_TOKEN", TOKEN)
    private = FakeInstance("login.example", _posts("login.example", 3), hashtag_feeds="authenticated", token=TOKEN)
    public = FakeInstance("open.example", _posts("open.example", 2))
    with FakeMastodonServer(private) as c, FakeMastodonServer(public) as a:
        rc = main(["-v", "crawl", "mastodon", "--out", str(tmp_path), "--instance", c.url, "--instance", a.url,
                   "--token-instance", c.url, "--allow-instance", c.url, "--tag", "queer", *UA])
        assert rc == 0
        assert all(r["headers"].get("Authorization") == f"Bearer {TOKEN}" for r in c.requests
                   if r["path"].startswith("/api/"))  # robots.txt is asked without it
        assert not any("Authorization" in r["headers"] for r in a.requests)
        assert {r["headers"]["User-Agent"] for r in a.requests} == {"test-crawler (me@example.org)"}
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["instances"][c.url]["probe"]["hashtag_feeds"] == "login_required"  # crawled: the admin agreed
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
                     "--token-file", str(token_file), "--allow-instance", c.url, *UA]) == 0
    assert len(read_posts(tmp_path / "out")) == 3


@pytest.mark.parametrize("args, message", [
    (["--tag", "trans mann", *UA], "not a hashtag: 'trans mann'"),
    (["--instance", "ftp://x.example", *UA], "not an instance URL"),
    (["--instance", "a.example", "--instance", "b.example", "--token-file", "{token}", *UA], "--token-instance"),
    (["--token-file", "{missing}", *UA], "cannot read token file"),
    (["--token-file", "{fifo}", *UA], "token file is not a regular file"),
    (["--deny-list", "{fifo}", *UA], "deny-list is not a regular file"),
    (["--max-requests", "0", *UA], "--max-requests must be at least 1"),
    ([], "needs a contact so that admins can reach you"),
    (["--user-agent", "queerbias-crawler/0.1 (contact: <your e-mail>)"], "has no contact"),
    (["--instance", "http://social.example", "--token-file", "{token}", *UA], "over plain http"),
    (["--key-file", "{out}/crawl.key", *UA], "lies inside the output folder"),
])
def test_user_errors_are_one_line(tmp_path, capsys, args, message):
    (tmp_path / "token").write_text(TOKEN)
    os.mkfifo(tmp_path / "fifo")  # open() on it would block forever
    args = [a.format(token=tmp_path / "token", missing=tmp_path / "missing", fifo=tmp_path / "fifo",
                     out=tmp_path / "out") for a in args]
    assert main(["crawl", "mastodon", "--out", str(tmp_path / "out"), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and err.startswith("queerbias crawl: error:")
    assert TOKEN not in err


def test_a_news_state_in_the_output_folder_is_one_clear_line(tmp_path, capsys):
    (tmp_path / "state.json").write_text(json.dumps({"version": 1, "seen": []}))
    with FakeMastodonServer(FakeInstance("a.example")) as server:
        assert main(["crawl", "mastodon", "--out", str(tmp_path), "--instance", server.url, *UA]) == 2
    err = capsys.readouterr().err.strip()
    assert "belongs to a news crawl" in err and "\n" not in err


def test_all_instances_unreachable_is_an_error(tmp_path, capsys):
    with FakeMastodonServer(FakeInstance("gone.example")) as gone:
        url = gone.url
    # Real backoff sleeps would make this slow; one attempt per request is enough to fail.
    assert main(["crawl", "mastodon", "--out", str(tmp_path), "--instance", url, "--max-requests", "1", *UA]) == 2
    assert "no instance could be crawled" in capsys.readouterr().err


def _as_in_a_terminal() -> None:
    """Ctrl-C reaches the crawl even when the tests run in a background job, whose children ignore SIGINT."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


# The crawl with a request deadline of an hour, longer than any test waits: a crawl that waited for a held
# request's answer (or its deadline) after Ctrl-C would then run into the test's net instead of ending.
_PATIENT = ("import dataclasses, sys; from queerbias.crawl.mastodon import cli; given = cli.settings_from_args; "
            "cli.settings_from_args = lambda args: dataclasses.replace(given(args), request_timeout=3600.0); "
            "sys.exit(cli.main(sys.argv[1:]))")


def _crawl_process(out: Path, *urls: str, patient: bool = False) -> subprocess.Popen:
    program = ["-c", _PATIENT] if patient else [str(REPO / "crawl" / "mastodon.py")]
    args = [sys.executable, *program, "--out", str(out), "--tag", "queer", "--tag", "nichtbinär", *UA]
    for url in urls:
        args += ["--instance", url]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_as_in_a_terminal)


def _two_instances() -> tuple[FakeInstance, FakeInstance]:
    a = FakeInstance("a.example", _posts("a.example", 90) + _posts("a.example", 20, tag="nichtbinär",
                                                                     start=1000)[::-1])
    return a, FakeInstance("b.example", _posts("b.example", 30))


# What a complete crawl of _two_instances keeps: every post once (b's posts have the same texts as a's first 30).
COMPLETE = Counter({f"Nr. {i}: {GERMAN}": 1 + (i < 20) + (i < 30) for i in range(90)})


def _texts(posts: list[dict]) -> Counter:
    assert len({p["doc_id"] for p in posts}) == len(posts)
    return Counter(p["text"] for p in posts)


def _assert_consistent(out: Path, killed: bool = False) -> list[dict]:
    """Every line complete, as many as state.json committed, a sealed line per post (a kill may leave
    sealed lines of posts that were never committed; the next start drops them)."""
    posts = read_posts(out)
    assert json.loads((out / "state.json").read_text())["records"] == len(posts)
    sealed = [json.loads(line)["post"] for line in (out / "reid.jsonl").read_text().splitlines()]
    committed = [p["doc_id"].removeprefix("mastodon:") for p in posts]
    assert set(committed) <= set(sealed) if killed else sealed == committed
    return posts


@contextmanager
def _crawl_held_mid_way(tmp_path: Path, pages: int, patient: bool = False):
    """Two fake instances, and a crawl process whose request for a's page `pages + 1` the server holds (until
    the test calls `resume`); it is held when this yields."""
    a, b = _two_instances()
    with FakeMastodonServer(a) as sa, FakeMastodonServer(b) as sb:
        sa.pause_after_timeline_requests(pages)
        process = _crawl_process(tmp_path / "out", sa.url, sb.url, patient=patient)
        try:
            if not sa.paused.wait(timeout=HANG):
                process.kill()
                pytest.fail(f"no request of the crawl was held; it said: {process.communicate()[1].decode()}")
            yield sa, sb, tmp_path / "out", process
        finally:
            if process.poll() is None:  # a failed test leaves no crawl running
                process.kill()
                process.wait()


def test_sigkill_mid_crawl_then_rerun_loses_and_duplicates_nothing(tmp_path):
    with _crawl_held_mid_way(tmp_path, pages=2) as (sa, sb, out, victim):
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=HANG)
        sa.resume()
        partial = _assert_consistent(out, killed=True)
        assert 0 < len(partial) < COMPLETE.total()
        state = json.loads((out / "state.json").read_text())
        assert state["instances"][sa.url]["cursors"]["tag:queer"]["pass_max_id"]

        rerun = _crawl_process(out, sa.url, sb.url)
        stdout, stderr = rerun.communicate(timeout=HANG)
        assert rerun.returncode == 0, stderr.decode()
    posts = _assert_consistent(out)
    assert posts[: len(partial)] == partial
    assert _texts(posts) == COMPLETE


def test_one_ctrl_c_stops_a_crawl_blocked_in_a_request_with_the_state_saved(tmp_path):
    # The held request is never answered before `resume`, and the crawl's own request deadline lies past the
    # net: the crawl can end here only if Ctrl-C gives up the request it is blocked in.
    with _crawl_held_mid_way(tmp_path, pages=2, patient=True) as (sa, sb, out, victim):
        victim.send_signal(signal.SIGINT)  # once
        _, stderr = victim.communicate(timeout=HANG)
        assert sa.holding == 1  # it ended while its request was still held: it did not wait for the answer
        assert victim.returncode == 130
        lines = stderr.decode().strip().splitlines()
        assert "Traceback" not in stderr.decode()
        assert lines[-1].startswith("crawl mastodon: interrupted; everything committed is saved")
        sa.resume()
        partial = _assert_consistent(out)
        assert 0 < len(partial) < COMPLETE.total()
        rerun = _crawl_process(out, sa.url, sb.url)
        _, err = rerun.communicate(timeout=HANG)
        assert rerun.returncode == 0, err.decode()
    assert _texts(_assert_consistent(out)) == COMPLETE


def test_a_second_run_on_the_same_folder_is_refused_while_the_first_runs(tmp_path):
    with _crawl_held_mid_way(tmp_path, pages=1) as (sa, sb, out, first):
        second = _crawl_process(out, sa.url, sb.url)
        _, err = second.communicate(timeout=HANG)
        assert second.returncode == 2
        assert "is in use by another queerbias process" in err.decode()
        sa.resume()
        assert first.wait(timeout=HANG) == 0
    # Nothing lost, one key for everything (no second salt in the folder).
    assert _texts(_assert_consistent(out)) == COMPLETE
    assert not list(out.glob("*.key")) and not list(out.glob("*salt*"))


def _gzip_bomb(inflated_mb: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [packer.compress(b"[")] + [packer.compress(b" " * (1 << 20)) for _ in range(inflated_mb)]
    return b"".join(parts + [packer.compress(b"]"), packer.flush()])


def test_a_gzip_bomb_stays_under_a_memory_cap(tmp_path):
    inst = FakeInstance("a.example", _posts("a.example", 3))
    inst.raw["/api/v1/timelines/tag/queer"] = (200, {"Content-Encoding": "gzip",
                                                     "Content-Type": "application/json"}, _gzip_bomb(300))
    measure = ("import resource, sys; from queerbias.crawl.mastodon.cli import main; "
               "from queerbias.text.language import detect_language; "
               "detect_language('Heute waren wir beim CSD in der Stadt'); "
               "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, flush=True); sys.exit(main(sys.argv[1:]))")
    with FakeMastodonServer(inst) as server:
        child = subprocess.Popen([sys.executable, "-c", measure, "--out", str(tmp_path / "out"), "--instance",
                                  server.url, "--tag", "queer", *UA], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _, code, usage = os.wait4(child.pid, 0)
        baseline_kb = int(child.stdout.readline())
    assert os.waitstatus_to_exitcode(code) == 0
    # 300 MB of JSON inflated in memory would add far more than the cap (about 1 GB before this was
    # fixed); bounded reading adds the 4 MB cap and a little.
    assert (usage.ru_maxrss - baseline_kb) / 1024 < 60, (baseline_kb, usage.ru_maxrss)
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert stats["instances"][server.url]["feeds"]["tag:queer"].startswith("failed: Refused: answer larger")


# Runs the crawl with writes past 16 KB failing (EFBIG), as on a full disk: the first page fits, a later one
# does not. The language model is loaded first because py3langid unpacks it to a temporary file.
_STARVED = ("import resource, sys; from queerbias.text.language import detect_language; "
            "detect_language('Heute waren wir beim CSD in der Stadt'); "
            "resource.setrlimit(resource.RLIMIT_FSIZE, (16_000, 16_000)); "
            "from queerbias.crawl.mastodon.cli import main; sys.exit(main(sys.argv[1:]))")


def test_a_full_disk_mid_commit_leaves_no_torn_bytes_and_the_rerun_completes(tmp_path):
    a, b = _two_instances()
    with FakeMastodonServer(a) as sa, FakeMastodonServer(b) as sb:
        out = tmp_path / "out"
        starved = subprocess.Popen([sys.executable, "-c", _STARVED, "--out", str(out), "--instance", sa.url,
                                    "--instance", sb.url, "--tag", "queer", "--tag", "nichtbinär", *UA],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _, err = starved.communicate(timeout=HANG)
        assert starved.returncode == 2
        assert "cannot write to" in err.decode() and "File too large" in err.decode()
        assert "Traceback" not in err.decode()
        partial = _assert_consistent(out)  # every line complete and committed
        assert 0 < len(partial) < COMPLETE.total()
        rerun = _crawl_process(out, sa.url, sb.url)
        _, err = rerun.communicate(timeout=HANG)
        assert rerun.returncode == 0, err.decode()
    assert _texts(_assert_consistent(out)) == COMPLETE
