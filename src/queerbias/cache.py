"""Where downloaded benchmarks and models are kept between runs.

One root for everything the toolkit fetches, so a user can move or wipe it with
a single environment variable: `$QUEERBIAS_CACHE`, else `~/.cache/queerbias`.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "QUEERBIAS_CACHE"


def cache_root() -> Path:
    """The cache root, without creating it."""
    configured = os.environ.get(ENV_VAR)
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "queerbias"


def cache_dir(*parts: str) -> Path:
    """The folder `parts` below the cache root, created if missing."""
    path = cache_root().joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path
