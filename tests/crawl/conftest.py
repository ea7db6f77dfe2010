"""Every crawl test gets its own crawl key outside its output folders, never the user's real one."""

from __future__ import annotations

import pytest

from queerbias.crawl.keys import KEY_ENV


@pytest.fixture(autouse=True)
def crawl_key(tmp_path_factory, monkeypatch):
    path = tmp_path_factory.mktemp("key") / "crawl.key"
    monkeypatch.setenv(KEY_ENV, str(path))
    return path
