"""Named pair benchmarks: what exists, where it comes from, and a verified local copy.

The list itself is data (`queerbias/data/benchmarks.yaml`). A name resolves to
a generated `PairSet` (builtin sets) or to a downloaded file in the cache, whose
sha256 is recorded beside it and checked on every later use, so a result can
always name the exact bytes it was computed on. Parsing files is `pairs.io`'s job.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from queerbias.cache import cache_dir, cache_root
from queerbias.errors import QueerbiasError
from queerbias.pairs.schema import PairSet
from queerbias.pairs.splits import parse_split
from queerbias.yamlio import load_packaged_yaml

log = logging.getLogger(__name__)

DOWNLOAD_TIMEOUT_S = 60
CHUNK = 1 << 20
#: a folder of public data beside the checkout (`NAME/FILENAME` per benchmark), used before
#: any download: the project keeps such copies in ../shared/data for tests and experiments
SHARED_DATA_ENV = "QUEERBIAS_SHARED_DATA"


@dataclass(frozen=True)
class BenchmarkInfo:
    """One registered benchmark, as declared in benchmarks.yaml."""

    name: str
    description: str
    language: str
    licence: str
    citation: str
    homepage: str
    layout: str
    pairs: int | None = None
    builtin: str = ""
    urls: tuple[str, ...] = ()
    url_verified: bool = True
    filename: str = ""
    columns: tuple[str, ...] = ()
    sha256: str | None = None
    #: builtin sets: "module:function" giving each pair id's split columns (`pairs.splits`)
    split_keys: str = ""
    #: the column `NAME:train` / `NAME:test` splits by when the spec names none
    split_by: str = ""
    #: a split-key column that declares each pair's part (validation, test): `NAME:<part>` takes it
    parts: str = ""
    #: part -> the content checksum it was frozen with (`PairSet.checksum`): a part that differs is refused
    frozen: dict | None = None
    #: why a name that once was a benchmark no longer is, and what to use instead
    retired: str = ""

    def cached_path(self) -> Path:
        """Where the downloaded file lives (whether or not it is there yet)."""
        return cache_root() / "benchmarks" / self.name / self.filename

    def is_cached(self) -> bool:
        return bool(self.filename) and self.cached_path().is_file()


@cache
def _entries() -> tuple[dict[str, BenchmarkInfo], dict[str, str]]:
    """The registered benchmarks by name, and the retired names with why they were retired."""
    registry, retired = {}, {}
    for entry in load_packaged_yaml("data/benchmarks.yaml")["benchmarks"]:
        if "retired" in entry:
            retired[entry["name"]] = entry["retired"]
            continue
        info = BenchmarkInfo(
            **{**entry, "urls": tuple(entry.get("urls", ())), "columns": tuple(entry.get("columns", ()))}
        )
        if not info.builtin and not (info.urls and info.filename):
            raise ValueError(f"benchmarks.yaml: {info.name!r} needs either builtin or urls + filename")
        registry[info.name] = info
    return registry, retired


def _registry() -> dict[str, BenchmarkInfo]:
    return _entries()[0]


def list_benchmarks() -> list[BenchmarkInfo]:
    """All registered benchmarks in file order."""
    return list(_registry().values())


def is_registered(name: str) -> bool:
    return name in _registry()


def get_benchmark(name: str) -> BenchmarkInfo:
    try:
        return _registry()[name]
    except KeyError:
        raise QueerbiasError(_unknown(name)) from None


def _unknown(name: str) -> str:
    """Why `name` is not a benchmark: retired (with what to use), or never registered."""
    registry, retired = _entries()
    if name in retired:
        return f"benchmark {name!r} was retired: {retired[name]}"
    return f"unknown benchmark {name!r}; registered: {', '.join(registry)}"


def check_frozen(info: BenchmarkInfo, part: str, pair_set: PairSet) -> None:
    """Refuse a part of a frozen set whose pairs are not those it was frozen with: a judged split must not
    drift once a model was scored on it (a change is a new set under a new name)."""
    expected = (info.frozen or {}).get(part)
    if expected is not None and pair_set.checksum != expected:
        raise QueerbiasError(f"{info.name}:{part} has checksum {pair_set.checksum}, but it was frozen with "
                             f"{expected} (data/benchmarks.yaml): its pairs changed after it was frozen, so its "
                             "figures would not be comparable with those already scored on it; restore the "
                             "family's files, or register the changed family under a new name")


def build_builtin(info: BenchmarkInfo) -> PairSet:
    """Run a builtin set's generator ("module:function" in the registry)."""
    module, _, function = info.builtin.partition(":")
    return getattr(importlib.import_module(module), function)()


def resolve_pairs(spec: str) -> Path | PairSet:
    """A registered name (built, or downloaded on first use) or a path to a pairs file."""
    registry = _registry()
    if spec in registry:
        info = registry[spec]
        return build_builtin(info) if info.builtin else fetch(info)
    path = Path(spec).expanduser()
    if path.exists():  # the reader says what is wrong with a folder or a FIFO
        return path
    if spec in _entries()[1]:
        raise QueerbiasError(_unknown(spec))
    raise QueerbiasError(
        f"{spec!r} is neither a registered benchmark ({', '.join(registry)}) nor an existing file"
    )


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def shared_copy(info: BenchmarkInfo) -> Path | None:
    """`$QUEERBIAS_SHARED_DATA/NAME/FILENAME` (default ../shared/data), when present and
    matching the registered checksum (if one is registered)."""
    if info.builtin:
        return None
    path = Path(os.environ.get(SHARED_DATA_ENV, "../shared/data")) / info.name / info.filename
    if not path.is_file() or (info.sha256 and sha256_file(path) != info.sha256):
        return None
    return path


def available_offline(spec: str) -> bool:
    """Whether a pair spec can be resolved without a download (split specs by their source)."""
    split = None if Path(spec).is_file() else parse_split(spec)
    source = split.source if split else spec
    info = _registry().get(source)
    if info is None:
        return Path(source).expanduser().is_file()
    return bool(info.builtin) or info.is_cached() or shared_copy(info) is not None


def fetch(info: BenchmarkInfo) -> Path:
    """The verified local copy of a file benchmark: the cache, the shared data folder, or a
    download on first use."""
    target = cache_dir("benchmarks", info.name) / info.filename
    if target.is_file():
        _verify_cached(info, target)
        return target
    shared = shared_copy(info)
    if shared is not None:
        return shared
    failures = []
    for url in info.urls:
        try:
            digest = _download(url, target, info)
        except urllib.error.HTTPError as err:
            failures.append(f"{url}: the server answered HTTP {err.code}")
        except OSError as err:  # URLError, refused connections and timeouts
            failures.append(f"{url}: {getattr(err, 'reason', err)}")
        else:
            _sidecar(target).write_text(f"{digest}  {target.name}\n", encoding="utf-8")
            log.info("downloaded %s to %s (sha256 %s)", info.name, target, digest)
            return target
    raise QueerbiasError(_download_failed(info, failures))


def _download_failed(info: BenchmarkInfo, failures: list[str]) -> str:
    offline = not any("HTTP" in failure for failure in failures)
    cause = (
        "the machine seems to be offline"
        if offline
        else "the file is not at the registered URL"
        + ("" if info.url_verified else " (that URL is unverified)")
    )
    where = f" from {info.homepage}" if info.homepage else ""
    return (
        f"download of benchmark {info.name!r} failed ({'; '.join(failures)}): {cause}. "
        f"Download the file yourself{where} and pass it with --pairs PATH instead."
    )


def _download(url: str, target: Path, info: BenchmarkInfo) -> str:
    """Stream `url` to a temp file beside `target`, check it, then rename it into place."""
    handle = tempfile.NamedTemporaryFile(dir=target.parent, prefix=f".{target.name}.", suffix=".part", delete=False)
    digest = hashlib.sha256()
    try:
        with handle, urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response:
            while chunk := response.read(CHUNK):
                digest.update(chunk)
                handle.write(chunk)
        if info.sha256 and digest.hexdigest() != info.sha256:
            raise QueerbiasError(
                f"download of benchmark {info.name!r} from {url} has sha256 {digest.hexdigest()}, "
                f"expected {info.sha256}; the file changed upstream or the download was altered"
            )
        os.replace(handle.name, target)
    finally:
        if os.path.exists(handle.name):
            os.unlink(handle.name)
    return digest.hexdigest()


def _verify_cached(info: BenchmarkInfo, path: Path) -> None:
    """Check a cached file against its recorded sha256 (and the registry's, if known)."""
    actual = sha256_file(path)
    sidecar = _sidecar(path)
    recorded = sidecar.read_text(encoding="utf-8").split()[0] if sidecar.is_file() else None
    expected = info.sha256 or recorded
    if expected and actual != expected:
        raise QueerbiasError(
            f"cached benchmark {path} has sha256 {actual} but {expected} was recorded; "
            f"delete {path} to download it again"
        )
    if recorded is None:
        sidecar.write_text(f"{actual}  {path.name}\n", encoding="utf-8")
