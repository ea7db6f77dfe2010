"""Where runs go: the files of a run folder, folder names made from specs, checked output folders.

Light (no numeric stack): the CLI, the API, the store and training all name folders here.
"""

from __future__ import annotations

import re
from pathlib import Path

from queerbias.outputs import output_path

SUMMARY_FILE = "summary.json"  # written last: its presence means the run finished
PARTIAL_DIR = ".partial"  # progress of an unfinished run
#: a name that becomes one folder (a benchmark's, a study's model or run): no `/`, `.` or `..`, no hidden folder
FOLDER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")


def folder_name_problem(name) -> str | None:
    """What keeps `name` from naming one folder of its own (None: nothing)."""
    if isinstance(name, str) and FOLDER_NAME.match(name):
        return None
    return (f"names a folder, so it must be letters, digits, '.', '_' or '-' (at most 64), starting with a letter "
            f"or digit; got {name!r}")


def slug(spec: str) -> str:
    """A folder name for a model or data spec: its last path component, `:` as `-`, other
    characters outside [A-Za-z0-9._-] as `_` (`org/model` -> `model`, `queerbias-de:test` ->
    `queerbias-de-test`)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", spec.rstrip("/").split("/")[-1].replace(":", "-"))


def default_out(suite_name: str, spec: str) -> Path:
    """Where `queerbias run SUITE` writes without --out: runs/<suite>/<model>."""
    return Path("runs") / suite_name / slug(spec)


def checked_out(value: str | Path, inputs=()) -> Path:
    """An output directory that can be written (not empty, not a file, not read-only), that
    is not, does not contain and does not lie inside any of `inputs`, and that no other tool
    owns (`outputs.output_path`); the path to write."""
    return output_path(value, inputs)
