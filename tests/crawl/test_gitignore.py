"""Every output path the docs tell people to use is git-ignored: crawled posts must never be committed."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DOCS = ("README.md", "docs/crawl-mastodon.md", "docs/corpus.md", "corpora/manifests/seed-mastodon-taz.yaml")
_OUTPUT_OPTION = re.compile(r"(?:--out|-o|--output)[ =]([\w./\-]+)")


def _documented_outputs() -> set[str]:
    paths = set()
    for name in DOCS:
        text = (REPO / name).read_text(encoding="utf-8")
        paths |= {p for p in _OUTPUT_OPTION.findall(text) if not p.startswith(("DIR", "OUT", "-"))}
    manifest = yaml.safe_load((REPO / DOCS[-1]).read_text(encoding="utf-8"))
    paths |= {manifest.get("output_dir") or f"corpora/{manifest['name']}", manifest["opt_out"]}
    paths |= {source["path"] for source in manifest["sources"]}
    return paths


def test_every_documented_output_path_is_ignored():
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    outputs = _documented_outputs()
    assert {"corpora/raw/mastodon", "corpora/raw/news", "corpora/opt-out.txt"} <= outputs
    files = ("posts.jsonl", "reid.jsonl", "state.json", "stats.json", "tombstones.json", "forgotten.json", "train.jsonl")
    candidates = sorted({path if Path(path).suffix else f"{path}/{name}" for path in outputs for name in files})
    answer = subprocess.run(["git", "check-ignore", "--stdin"], cwd=REPO, input="\n".join(candidates),
                            capture_output=True, text=True)
    assert sorted(set(candidates) - set(answer.stdout.splitlines())) == []  # documented outputs not ignored
