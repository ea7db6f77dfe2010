"""Corpus manifests: a YAML recipe (sources, filters, split) for `queerbias corpus build`.

A manifest makes a corpus reproducible from its inputs and documents what it is
for; see corpora/manifests/*.yaml for a commented example. Relative paths are
resolved against the current working directory (run builds from the repository
root). Unknown keys are errors, so a typo never silently falls back to a default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from queerbias.corpus.builder import BuildConfig
from queerbias.corpus.sources import FORMATS, SourceSpec
from queerbias.errors import DataError, QueerbiasError
from queerbias.yamlio import load_yaml_mapping

CORPORA_DIR = Path("corpora")
_TOP_LEVEL = {"name", "output_dir", "description", "intended_use", "maintainer",
              "validation_fraction", "seed", "min_words", "require_german",
              "near_duplicate_threshold", "shingle_size", "num_perm", "opt_out", "skip_bad",
              "max_crawl_age_days", "allow_stale", "sources"}
_SOURCE_KEYS = {"path", "name", "format", "licence", "description"}
_FORMAT_OPTIONS = {"jsonl": set(), "taz": {"since_year", "until_year", "keywords"}}


def load_manifest(path: Path) -> BuildConfig:
    """Read and validate a manifest; errors name the manifest file and the key."""
    path = Path(path)
    data = load_yaml_mapping(path, what="manifest")
    unknown = set(data) - _TOP_LEVEL
    if unknown:
        raise DataError(path, f"unknown keys {sorted(unknown)}", field=sorted(unknown)[0])
    for required in ("name", "sources"):
        if not data.get(required):
            raise DataError(path, "required", field=required)
    if not isinstance(data["sources"], list):
        raise DataError(path, "must be a list of sources", field="sources")
    sources = [_source(path, index, entry) for index, entry in enumerate(data["sources"], 1)]
    settings = {key: value for key, value in data.items() if key not in {"sources", "output_dir"}}
    if settings.get("opt_out"):
        settings["opt_out"] = Path(settings["opt_out"])
    output_dir = Path(data.get("output_dir") or CORPORA_DIR / data["name"])
    try:
        return BuildConfig(output_dir=output_dir, sources=sources, **settings)
    except (TypeError, ValueError, QueerbiasError) as err:
        raise DataError(path, str(err)) from None


def _source(path: Path, index: int, entry: Any) -> SourceSpec:
    where = f"sources[{index}]"
    if not isinstance(entry, dict) or not entry.get("path"):
        raise DataError(path, "each source needs at least a path", field=where)
    fmt = entry.get("format", "jsonl")
    if fmt not in FORMATS:
        raise DataError(path, f"unknown format {fmt!r}, expected one of {FORMATS}",
                        field=f"{where}.format")
    options = {key: value for key, value in entry.items() if key not in _SOURCE_KEYS}
    unknown = set(options) - _FORMAT_OPTIONS[fmt]
    if unknown:
        raise DataError(path, f"unknown keys {sorted(unknown)} for format {fmt!r}",
                        field=f"{where}.{sorted(unknown)[0]}")
    return SourceSpec(path=Path(entry["path"]), name=entry.get("name"), format=fmt,
                      licence=entry.get("licence") or SourceSpec.licence,
                      description=entry.get("description", ""), options=options)
