"""The crawl, takedown and build commands as the crawl tests run them: through the real CLI, in-process
or in a forked child that a kill point may end. Not a conftest.py, like mastodon_scenario."""

from __future__ import annotations

import json
import os
from datetime import timedelta

import idna
from mastodon_scenario import GERMAN, T0, UA, output_text, read_posts
from tqdm import tqdm

from queerbias.cli import main
from queerbias.crawl.mastodon.testserver import status


def a_label(host: str) -> str:
    return idna.encode(host, uts46=True).decode("ascii")


def post_by(id_: int, username: str, host: str, *, local: str = "d.example", tags=("queer",), **fields) -> dict:
    """A status by `username@host` as the server `local` shows it (uri on `host`, written there)."""
    acct = username if host == local else f"{username}@{host}"
    return status(id_, f"<p>Nr. {id_}: {GERMAN}</p>", domain=local, created=T0 + timedelta(minutes=id_ % 1000),
                  acct=acct, username=username, uri=f"https://{host}/users/{username}/statuses/{id_}", tags=tags,
                  **fields)


def crawl_cli(store, *urls, args=()) -> int:
    return main(["crawl", "mastodon", "--out", str(store), *(a for u in urls for a in ("--instance", u)),
                 "--tag", "queer", "--user-agent", UA, *map(str, args)])


def forget_cli(*args) -> int:
    return main(["corpus", "forget", *map(str, args)])


def build_cli(store, out, *extra) -> int:
    return main(["corpus", "build", "--name", "c", "--source", str(store / "posts.jsonl"), "-o", str(out),
                 "--validation-fraction", "0.3", "--no-near-duplicates", *extra])


def corpus_lines(out) -> list[dict]:
    return [json.loads(line) for split in ("train", "validation") if (out / f"{split}.jsonl").exists()
            for line in (out / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()]


def authors(store) -> set[str]:
    return {p["account"] for p in read_posts(store)}


def in_child(args: list[str], env: dict[str, str]) -> int:
    """Run the CLI in a forked child with `env` set; its exit status, or -SIGNAL when it was killed. (Forked,
    not started afresh: no second import of the CLI, a tenth of the time.)"""
    tqdm.monitor_interval = 0  # no progress-bar monitor thread that could hold a lock across the fork
    pid = os.fork()
    if pid == 0:  # the child: no pytest teardown, no servers (none run now)
        code = 1
        try:
            os.environ.update(env)
            code = main(args)
        finally:
            os._exit(code)
    _, wait_status = os.waitpid(pid, 0)
    return -os.WTERMSIG(wait_status) if os.WIFSIGNALED(wait_status) else os.WEXITSTATUS(wait_status)


def crawl_to_corpus(server, root, capsys) -> str:
    """Crawl `server` into ROOT/crawl, refresh it, forget bea@p.example, build ROOT/corpus: every output file and
    everything printed, case-folded, which no spelling of a person may be found in."""
    store, corpus = root / "crawl", root / "corpus"
    assert crawl_cli(store, server.url) == 0
    assert main(["crawl", "mastodon", "--refresh", "--out", str(store), "--user-agent", UA]) == 0
    assert forget_cli("--account", "bea@p.example", root) == 0
    assert build_cli(store, corpus, "--min-words", "post=1") == 0
    printed = capsys.readouterr()
    return (output_text(store, corpus) + printed.out + printed.err).casefold()
