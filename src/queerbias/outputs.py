"""The one guard for every path a command or API function writes to, and the lock on it.

Results must never replace what they were computed from: `score --pairs X/pairs.csv
--out X` would write the results over the pair file, `score --pairs
"X/pairs.csv:test?by=group" --out X` too (the split's file is an input as much as the
plain one), `card RUN --out RUN/config.yaml` the run's config, `corpus build -o X` with a
source inside X would shrink the source. `input_paths` turns every input a command or API
function reads (paths as typed, with `~`, `..` and symbolic links, split specs, the objects
the API takes) into the files and folders on this machine; `output_path` refuses an empty
path, a path that cannot be written, one that is, contains or lies inside an input, and a
folder that another tool owns (`folder_owner`: a Hugging Face Trainer folder, a model, a
git checkout, or a queerbias folder of another kind), before any work starts, and returns
the path the command then writes (with `~` expanded). Files and folders are compared by
identity (device and inode, of the path and of every folder above it), never by spelling:
a bind mount or a hard link of an input is that input. `OutputLock` refuses a folder that
another running process writes to (two `score` runs into one --out would otherwise both
finish and the last one win); the kernel drops the lock however the holder ends.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import fcntl
import os
from collections.abc import Iterable
from pathlib import Path, PurePath

from queerbias.errors import QueerbiasError
from queerbias.fileio import require_output_dir
from queerbias.pairs.splits import split_source

LOCK_FILE = ".queerbias.lock"

#: folders of other tools: writing results into them mixes our files with theirs, and a
#: training run there would take their checkpoints for its own
TRAINER = "a Hugging Face Trainer output folder"
MODEL = "a model folder"
GIT = "a git checkout"
#: folders a queerbias command keeps for itself (`kind` of `output_path`), by the files that show them
STUDY, TRAINING, CORPUS, CRAWL = "a queerbias study", "a queerbias training run", "a queerbias corpus", \
    "a queerbias crawl"
_SHOWN_BY = (
    (STUDY, ("study.yaml", "plan.json")),
    (TRAINING, ("config.yaml", "metrics.jsonl")),
    (TRAINING, ("study-cell.yaml",)),
    (CORPUS, ("datasheet.md", "stats.json")),
    (CRAWL, ("tombstones.json",)),
    (CRAWL, ("news.jsonl", "state.json")),
    (GIT, (".git",)),
    (TRAINER, ("trainer_state.json",)),
    (TRAINER, ("training_args.bin",)),
    (MODEL, ("config.json",)),
    (MODEL, ("adapter_config.json",)),
    (MODEL, ("model.safetensors",)),
    (MODEL, ("pytorch_model.bin",)),
)


def path_arg(text: str) -> Path:
    """argparse `type` of a path option: an empty value is refused (`Path('')` is the working
    folder, so `--out ''` would write there), `~` is expanded."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty value names no file or folder; give a path")
    return Path(text).expanduser()


def spec_arg(text: str) -> str:
    """argparse `type` of a spec option (a model, pair set or data: a name or a path): not empty."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty value names nothing; give a name or a path")
    return text


def input_paths(*inputs) -> list[Path]:
    """The files and folders on this machine that `inputs` read, resolved (symbolic links, `..`).

    An input is a path or spec as text (`~` expanded; a split spec `X/pairs.csv:test?by=group`
    reads X/pairs.csv), an object the API takes that was read from one (a pair set's
    `source`, a loaded model's `spec`, a run record's `path`, a transformers model's
    `name_or_path`), or a list, tuple, set or mapping (its values) of these. Names that are no path here (a
    registered benchmark, a Hub id) give nothing; so does any other value of a mapping (a
    config's numbers and words).
    """
    found: dict[Path, None] = {}
    pending = list(inputs)
    while pending:
        given = pending.pop(0)
        if given is None:
            continue
        if isinstance(given, (list, tuple, set, frozenset, dict)):
            pending[:0] = list(given.values() if isinstance(given, dict) else given)
            continue
        if not isinstance(given, (str, os.PathLike)):
            pending[:0] = [value for name in ("source", "spec", "path", "base_path", "name_or_path")
                           if isinstance(value := getattr(given, name, None), (str, os.PathLike))]
            continue
        text = os.fspath(given)
        if not str(text).strip():
            continue
        source = split_source(text)
        for candidate in dict.fromkeys((text, os.path.expanduser(text),
                                        *((source, os.path.expanduser(source)) if source else ()))):
            if os.path.lexists(candidate):
                found.setdefault(Path(candidate).resolve())
    return list(found)


def output_path(value: str | Path | None, inputs: Iterable = (), *, option: str = "--out", file: bool = False,
                kind: str | None = None) -> Path:
    """`value` as a writable output (a folder, or a file when `file`), checked against every input.

    Returns the path to write (`~` expanded). `inputs` go through `input_paths`. A folder
    (`file` false) that another tool owns is refused (`folder_owner`), and so is a queerbias
    folder of another kind than `kind` (a study, a training run, a corpus, a crawl).
    """
    what = "file" if file else "directory"
    if value is None or not isinstance(value, (str, os.PathLike)) or not str(os.fspath(value)).strip():
        raise QueerbiasError(f"{option} must name a {what}" + (
            f", got {type(value).__name__}" if value is not None and not isinstance(value, (str, os.PathLike))
            else " (an empty value would write into the current one)"))
    if isinstance(value, PurePath) and not value.parts:
        raise QueerbiasError(f"{option} must name a {what}, got {value!r}: Path('') is Path('.'), the working folder "
                             "itself, so an empty path would write into it; name the folder")
    path = Path(os.path.expanduser(os.fspath(value)))
    require_output_dir(path.parent if file else path, option)
    if file and path.is_dir():
        raise QueerbiasError(f"{option} {path} is a directory; give the file to write")
    target = _Placed(path)
    for source in input_paths(*inputs):
        shown, placed = _shown(source), _Placed(source)
        if target.identity is not None and target.identity == placed.identity:
            raise QueerbiasError(f"{option} {path} is the input {shown}; writing there would destroy it; "
                                 f"choose another {what}")
        if target.identity is not None and target.identity in placed.above:
            raise QueerbiasError(f"{option} {path} contains the input {shown}; results written there could "
                                 "replace it; choose another folder")
        if source.is_dir() and placed.identity in target.above:
            raise QueerbiasError(f"{option} {path} lies inside the input folder {shown}; results written there "
                                 "would change the input; choose a folder outside it")
    if not file:
        owner = folder_owner(path)
        if owner is not None and owner[0] != kind:
            raise QueerbiasError(f"{option} {path} is {owner[0]} ({owner[1].relative_to(path)} shows it), not a folder "
                                 "of this command's results; writing there could replace its files; choose an empty "
                                 "folder or a new one")
    return path


def folder_owner(folder: str | Path) -> tuple[str, Path] | None:
    """(what it is, the file that shows it) for a folder another tool, or another kind of
    queerbias command, keeps for itself; None for a new, empty or ordinary folder."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    for owner, names in _SHOWN_BY:
        if all(os.path.lexists(folder / name) for name in names):
            return owner, folder / names[0]
    trainer = next(folder.glob("checkpoint-*/trainer_state.json"), None)
    return (TRAINER, trainer) if trainer is not None else None


class _Placed:
    """Where a path lies on this machine: its identity (device and inode; None while it does not
    exist) and the identities of every existing folder above it, after `..` and symbolic links.

    A bind mount shows its source's device and inode, and a hard link is its file, so two
    spellings of one file or folder compare equal however they were reached.
    """

    def __init__(self, path: Path):
        resolved = Path(path).resolve()
        self.identity = _identity(resolved)
        self.above = {found for folder in resolved.parents if (found := _identity(folder)) is not None}


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_dev, status.st_ino


def _shown(path: Path) -> str:
    """A path as the user typed it where it lies below the working folder, else absolute."""
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def run_files(run: str | Path, *, except_: Iterable[str | Path] = ()) -> list[Path]:
    """The files of a folder that a command reads and writes beside (a training run for `card`):
    each is an input, except the ones the command itself writes (`except_`)."""
    keep = {_identity(Path(p)) for p in except_} - {None}
    root = Path(run)
    if not root.is_dir():
        return []
    return [p for p in root.rglob("*") if p.is_file() and _identity(p) not in keep]


def lock_file(path: Path, mode: int, busy: str, wait: bool = False) -> int:
    """An exclusive `flock` on `path` (created with `mode`), holding this process id; `busy` is
    the refusal when another process holds it (with `wait`, the process waits for it instead).
    Returns the descriptor: closing it unlocks.

    A lock file its holder removed on release is locked afresh: a process that found the
    file and locked it after the removal sees a different inode and tries again.
    """
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, mode)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except OSError as err:
            os.close(fd)
            if err.errno in (errno.EWOULDBLOCK, errno.EACCES):
                raise QueerbiasError(busy) from None
            raise
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


class OutputLock:
    """Exclusive lock on an output folder while this process writes it (`with OutputLock(dir, what):`).

    A folder it had to create is removed again when the block fails and left it empty (a
    refused run leaves nothing behind); the lock file is removed on release (`lock_file`
    makes that safe).
    """

    def __init__(self, folder: str | Path, what: str):
        self.folder, self.what = Path(folder), what
        self._fd: int | None = None

    def __enter__(self) -> OutputLock:
        self._created = not self.folder.exists()
        self.folder.mkdir(parents=True, exist_ok=True)
        self._fd = lock_file(self.folder / LOCK_FILE, 0o644,
                             f"{self.folder} is in use by another running queerbias process ({self.what} into the "
                             "same folder); wait for it to finish or choose another folder")
        return self

    def __exit__(self, kind, *exc) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.folder / LOCK_FILE)
        os.close(self._fd)
        self._fd = None
        if kind is not None and self._created:
            with contextlib.suppress(OSError):  # not empty: keep what is there
                self.folder.rmdir()
