"""Benchmark registry: resolving names and paths, cached downloads with checksums, offline errors.

Downloads go to a local http.server on 127.0.0.1; no test touches the internet.
"""

from __future__ import annotations

import argparse
import hashlib
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from queerbias.commands import benchmarks as benchmarks_command
from queerbias.errors import QueerbiasError
from queerbias.pairs import registry
from queerbias.pairs.registry import (
    BenchmarkInfo,
    fetch,
    list_benchmarks,
    resolve_pairs,
)
from queerbias.pairs.schema import PairSet

CONTENT = b"Gender_ID_x,Gender_ID_y,sent_x,sent_y\nGay,Straight,a,b\n"


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("QUEERBIAS_CACHE", str(root))
    return root


@pytest.fixture
def server(tmp_path):
    """A local HTTP server over tmp_path/www; yields its base URL."""
    www = tmp_path / "www"
    www.mkdir()
    (www / "pairs.csv").write_bytes(CONTENT)

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(www)))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", www
    httpd.shutdown()
    httpd.server_close()


def info(url: str, sha256: str | None = None) -> BenchmarkInfo:
    return BenchmarkInfo(
        name="local-test", description="", language="de", licence="MIT", citation="",
        homepage="https://example.org/repo", layout="winoqueer",
        urls=(url,), filename="pairs.csv", sha256=sha256,
    )


def test_registry_declares_the_benchmarks():
    by_name = {b.name: b for b in list_benchmarks()}
    assert set(by_name) == {"queerbias-de", "queerbias-de-frames", "queerbias-knowledge", "queerbias-de-neutral",
                            "queerbias-de-ood-plural", "queerbias-de-ood-names", "queerbias-fr-ood", "queerbias-es-ood",
                            "queerbias-de-frames-contrary", "queerbias-de-shapes", "queerbias-de-contrast", "winoqueer-de",
                            "winoqueer-de-survey",
                            "winoqueer", "winoqueer-v0"}
    assert by_name["winoqueer-de"].pairs == by_name["winoqueer"].pairs == 45540
    assert by_name["winoqueer-de-survey"].pairs == 387
    assert by_name["winoqueer"].urls[0].endswith("katyfelkner/winoqueer/main/data/winoqueer_final.csv")
    assert by_name["winoqueer-v0"].layout == "crows-pairs"
    assert all(b.licence and b.language in ("de", "en", "fr", "es") for b in by_name.values())


def test_builtin_name_resolves_to_a_pairset():
    pairs = resolve_pairs("queerbias-de")
    assert isinstance(pairs, PairSet) and pairs.name == "queerbias-de"


def test_existing_path_resolves_to_itself(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_bytes(CONTENT)
    assert resolve_pairs(str(path)) == path


def test_unknown_spec_names_the_registered_sets():
    with pytest.raises(QueerbiasError, match="winoqueer-v0"):
        resolve_pairs("no-such-set")


def test_download_records_checksum_and_reuses_the_cache(server, cache):
    base, www = server
    path = fetch(info(f"{base}/pairs.csv", hashlib.sha256(CONTENT).hexdigest()))
    assert path.read_bytes() == CONTENT
    assert path.is_relative_to(cache)
    sidecar = path.with_name("pairs.csv.sha256")
    assert sidecar.read_text().split()[0] == hashlib.sha256(CONTENT).hexdigest()
    assert not [p for p in path.parent.iterdir() if p.suffix == ".part"]
    (www / "pairs.csv").unlink()  # a second use must not download again
    assert fetch(info(f"{base}/pairs.csv")) == path


def test_unknown_checksum_is_recorded_on_first_download(server):
    base, _ = server
    path = fetch(info(f"{base}/pairs.csv"))
    assert path.with_name("pairs.csv.sha256").read_text().split()[0] == hashlib.sha256(CONTENT).hexdigest()


def test_checksum_mismatch_on_download_keeps_nothing(server, cache):
    base, _ = server
    with pytest.raises(QueerbiasError, match="expected 0000"):
        fetch(info(f"{base}/pairs.csv", "0" * 64))
    folder = cache / "benchmarks" / "local-test"
    assert list(folder.iterdir()) == []


def test_cached_file_changed_after_download_is_refused(server):
    base, _ = server
    path = fetch(info(f"{base}/pairs.csv"))
    path.write_bytes(CONTENT + b"Gay,Straight,c,d\n")
    with pytest.raises(QueerbiasError, match="delete"):
        fetch(info(f"{base}/pairs.csv"))


def test_http_error_points_to_the_homepage(server):
    base, _ = server
    with pytest.raises(QueerbiasError, match=r"HTTP 404.*example\.org/repo.*--pairs PATH"):
        fetch(info(f"{base}/missing.csv"))


def test_offline_download_explains_and_suggests_pairs_path(monkeypatch):
    unreachable = info("http://127.0.0.1:9/pairs.csv")
    monkeypatch.setattr(registry, "_registry", lambda: {unreachable.name: unreachable})
    with pytest.raises(QueerbiasError) as err:
        resolve_pairs("local-test")
    message = str(err.value)
    assert "download of benchmark 'local-test' failed" in message
    assert "seems to be offline" in message
    assert "--pairs PATH" in message


def test_benchmarks_command_lists_cached_state(server, monkeypatch, capsys):
    base, _ = server
    local = info(f"{base}/pairs.csv")
    builtin = next(b for b in list_benchmarks() if b.builtin)
    monkeypatch.setattr(registry, "_registry", lambda: {builtin.name: builtin, local.name: local})
    parser = argparse.ArgumentParser()
    benchmarks_command.register(parser.add_subparsers())
    args = parser.parse_args(["benchmarks"])
    assert args.func(args) == 0
    before = capsys.readouterr().out
    fetch(local)
    assert args.func(args) == 0
    after = capsys.readouterr().out
    assert before.splitlines()[0].split() == ["name", "language", "pairs", "cached", "licence"]
    assert "builtin" in before
    assert [line.split()[3] for line in before.splitlines() if line.startswith("local-test")] == ["no"]
    assert [line.split()[3] for line in after.splitlines() if line.startswith("local-test")] == ["yes"]


def test_pinned_v0_checksum_matches_the_shared_copy(shared_data):
    v0 = next(b for b in list_benchmarks() if b.name == "winoqueer-v0")
    assert registry.sha256_file(shared_data / "winoqueer-v0" / v0.filename) == v0.sha256

