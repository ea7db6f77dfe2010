"""Reading the GRUFF template files (task.tsv, context.tsv) from a folder or upstream.

The templates have no licence upstream, so the package never ships them: they are
read from a folder the user names, or downloaded once from the TAI-HAMBURG/gruff
repository into the cache. Each file is checked column by column and placeholder by
placeholder, and the pair of files gets a checksum that every result records.
"""

from __future__ import annotations

import csv
import hashlib
import io
import logging
import os
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from queerbias.cache import cache_dir
from queerbias.errors import DataError, QueerbiasError
from queerbias.fileio import read_text_utf8
from queerbias.records import check_header
from queerbias.suites.gruff.forms import CASES, PLACEHOLDERS

log = logging.getLogger(__name__)

FILES = ("task.tsv", "context.tsv")
UPSTREAM = "https://raw.githubusercontent.com/TAI-HAMBURG/gruff/{branch}/data/{name}"
UPSTREAM_BRANCHES = ("main", "master")
DOWNLOAD_TIMEOUT_S = 60
TASK_REFERENT = "$ARTICLE_AND_OCCUPATION"
CONTEXT_REFERENT = "$ARTICLE $OCCUPATION/PARTICIPANT"
TASK_COLUMNS = ("occupation", "participant", "sentence", "pronoun_type")
CONTEXT_COLUMNS = ("pronoun_type", "polarity", "explicit_template", "implicit_template")
POLARITIES = ("negative", "positive")
_CASE_OF = {placeholder: case for case, placeholder in PLACEHOLDERS.items()}


@dataclass(frozen=True)
class TaskTemplate:
    """One task sentence: the occupation must be resolved at the gap of `case`."""

    row: int  # 1-based data row in task.tsv: the template's id
    occupation: str
    participant: str
    sentence: str
    case: str


@dataclass(frozen=True)
class ContextTemplate:
    """An explicit introduction and its implicit continuation for one case.

    `content` numbers the templates of one case and polarity in file order: the
    positive and negative versions of one situation (a good/bad day) share it.
    """

    row: int
    case: str
    polarity: str
    content: int
    explicit: str
    implicit: str


@dataclass(frozen=True)
class TemplateSet:
    tasks: tuple[TaskTemplate, ...]
    contexts: tuple[ContextTemplate, ...]
    source: str
    checksum: str

    def contexts_for(self, case: str) -> tuple[ContextTemplate, ...]:
        return tuple(c for c in self.contexts if c.case == case)

    def describe(self) -> dict:
        return {"source": self.source, "checksum": self.checksum, "n_task": len(self.tasks),
                "n_context": len(self.contexts)}


def load_templates(source: str | Path | None = None) -> TemplateSet:
    """Templates from a folder holding task.tsv and context.tsv (or its data/ subfolder).

    None or "upstream" downloads the upstream files into the cache on first use.
    """
    folder = fetch_upstream() if source in (None, "upstream") else _folder(Path(source).expanduser())
    task_path, context_path = folder / FILES[0], folder / FILES[1]
    digest = hashlib.sha256()
    for path in (task_path, context_path):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return TemplateSet(_read_tasks(task_path), _read_contexts(context_path), str(folder),
                       digest.hexdigest()[:16])


def fetch_upstream() -> Path:
    """The cached upstream template files, downloaded when missing."""
    folder = cache_dir("gruff", "templates")
    for name in FILES:
        if not (folder / name).is_file():
            _download(name, folder / name)
    return folder


def _folder(path: Path) -> Path:
    for candidate in (path, path / "data"):
        if all((candidate / name).is_file() for name in FILES):
            return candidate
    raise QueerbiasError(f"{path}: no {' and '.join(FILES)} there (nor in {path / 'data'}); "
                         "pass the folder of the GRUFF templates, or omit it to download them")


def _download(name: str, target: Path) -> None:
    failures = []
    for branch in UPSTREAM_BRANCHES:
        url = UPSTREAM.format(branch=branch, name=name)
        try:
            with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response:
                data = response.read()
        except urllib.error.HTTPError as err:
            failures.append(f"{url}: HTTP {err.code}")
            continue
        except OSError as err:
            failures.append(f"{url}: {getattr(err, 'reason', err)}")
            continue
        handle, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{name}.")
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(tmp, target)
        log.info("downloaded %s to %s", url, target)
        return
    raise QueerbiasError(f"could not download the GRUFF template {name} ({'; '.join(failures)}); "
                         "fetch data/task.tsv and data/context.tsv from "
                         "https://github.com/TAI-HAMBURG/gruff and pass their folder")


def _rows(path: Path, columns: tuple[str, ...]) -> list[tuple[int, dict]]:
    with io.StringIO(read_text_utf8(path, "GRUFF template file"), newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        check_header(path, reader.fieldnames)
        missing = [c for c in columns if c not in (reader.fieldnames or [])]
        if missing:
            raise DataError(path, f"missing columns {missing}; found {reader.fieldnames}")
        rows = [(number, row) for number, row in enumerate(reader, start=1)]
    if not rows:
        raise DataError(path, "no templates")
    for number, row in rows:
        for column in columns:
            if not (row.get(column) or "").strip():
                raise DataError(path, "empty value", row=number, field=column)
    return rows


def _case(path: Path, number: int, value: str) -> str:
    case = _CASE_OF.get(value.strip())
    if case is None:
        raise DataError(path, f"unknown pronoun type {value!r}; expected one of {sorted(_CASE_OF)}",
                        row=number, field="pronoun_type")
    return case


def _check_gap(path: Path, number: int, field: str, text: str, case: str) -> None:
    """Exactly one gap, of the row's case, and no gap of another case."""
    if text.count(PLACEHOLDERS[case]) != 1:
        raise DataError(path, f"needs exactly one {PLACEHOLDERS[case]}", row=number, field=field)
    others = [PLACEHOLDERS[c] for c in CASES if c != case and PLACEHOLDERS[c] in text]
    if others:
        raise DataError(path, f"holds gaps of another case {others}", row=number, field=field)


def _read_tasks(path: Path) -> tuple[TaskTemplate, ...]:
    tasks = []
    for number, row in _rows(path, TASK_COLUMNS):
        case = _case(path, number, row["pronoun_type"])
        sentence = row["sentence"].strip()
        if not sentence.startswith(TASK_REFERENT + " ") or sentence.count(TASK_REFERENT) != 1:
            raise DataError(path, f"must start with {TASK_REFERENT} (and name it once): only the "
                            "nominative article is modelled", row=number, field="sentence")
        _check_gap(path, number, "sentence", sentence, case)
        tasks.append(TaskTemplate(number, row["occupation"].strip(), row["participant"].strip(),
                                  sentence, case))
    return tuple(tasks)


def _read_contexts(path: Path) -> tuple[ContextTemplate, ...]:
    contexts, seen = [], {}
    for number, row in _rows(path, CONTEXT_COLUMNS):
        case = _case(path, number, row["pronoun_type"])
        polarity = row["polarity"].strip()
        if polarity not in POLARITIES:
            raise DataError(path, f"polarity must be one of {POLARITIES}", row=number, field="polarity")
        explicit, implicit = row["explicit_template"].strip(), row["implicit_template"].strip()
        if not explicit.startswith(CONTEXT_REFERENT + " ") or explicit.count("$ARTICLE") != 1:
            raise DataError(path, f"must start with {CONTEXT_REFERENT}", row=number, field="explicit_template")
        _check_gap(path, number, "explicit_template", explicit, case)
        _check_gap(path, number, "implicit_template", implicit, case)
        content = seen.get((case, polarity), 0)
        seen[(case, polarity)] = content + 1
        contexts.append(ContextTemplate(number, case, polarity, content, explicit, implicit))
    return tuple(contexts)
