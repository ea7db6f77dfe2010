"""What a run records about itself: the run key and the provenance in summary.json's meta.

The run key says when two runs are the same run (suite, model fingerprint, data checksum,
settings and the suite's method), so a finished run is reused only when nothing that
changes its results changed; the meta records model, data, settings, method, versions,
timings and the environment beside every result.
"""

from __future__ import annotations

import hashlib
import json
import platform
from datetime import datetime, timezone
from importlib import metadata

from queerbias.families import DUAL_KIND_TYPES
from queerbias.options import settings_id, to_dict
from queerbias.suites.protocol import DataRef, Suite

_VERSIONED = ("torch", "transformers", "accelerate", "peft", "numpy", "scipy", "pandas", "tokenizers")


def package_versions() -> dict:
    """Versions of Python, queerbias and the packages results depend on."""
    versions = {"python": platform.python_version()}
    for name in ("queerbias", *_VERSIONED):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def run_key(suite: Suite, fingerprint: str, data: DataRef, settings, method: dict, use: dict | None = None) -> str:
    """What makes two runs the same run: suite, model, data, settings, the suite's method
    (`run_meta`: scoring configuration, counting rules) and how the weights are used where the
    fingerprint does not tell (`model_use`), so a changed method is never reused."""
    parts = (suite.name, fingerprint, data.checksum, settings_id(settings), json.dumps(method, sort_keys=True))
    if use:
        parts += (json.dumps(use, sort_keys=True),)
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:24]


def model_use(lm, language: str | None) -> dict:
    """How a run uses weights that allow more than one use: the language passed to a model with language
    embeddings and the kind of a model whose weights serve masked and causal LMs alike (XLM). Empty for
    every other model, whose run keys therefore stay as they were."""
    config = getattr(getattr(lm, "model", None), "config", None)
    use = {"lang": language} if language else {}
    if config is not None and getattr(config, "model_type", None) in DUAL_KIND_TYPES:
        use["kind"] = lm.kind
    return use


def run_meta(lm, ref: DataRef, settings, method: dict, key: str, processes: int, clock: tuple, n_items: int,
             extra: dict | None, language: str | None = None) -> dict:
    """summary.json's meta: model (with the `lang` it was given), data, settings, the suite's method, run key,
    versions, timings (`clock`: started, loaded, evaluated), environment and time, then `extra` (a training
    step...)."""
    started, loaded, evaluated = clock
    seconds = evaluated - loaded
    return {
        "model": {**lm.describe(), **({"lang": language} if language else {})},
        "data": ref.to_dict(),
        "settings": to_dict(settings),
        "settings_id": settings_id(settings),
        **method,
        "run_key": key,
        "versions": package_versions(),
        "timings": {"load_s": round(loaded - started, 3), "evaluate_s": round(seconds, 3),
                    "items_per_s": round(n_items / max(seconds, 1e-9), 2)},
        "environment": {"device": str(getattr(lm, "device", "cpu")), "processes": processes},
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        **(extra or {}),
    }
