"""Where a checkpoint's weights are read from, and how, without running code from a pickle.

Safetensors are read wherever they exist: in the folder, or on the requested Hub revision.
Older Hub checkpoints may have only pickled PyTorch weights (`pytorch_model.bin`) on their main
revision; for those, two safe ways in, in this order:
1. the Hub's safetensors conversion: Hugging Face's bot (SFconvertbot) opens a pull request
   adding `model.safetensors` converted from the `.bin`; its revision (`refs/pr/N`) is read as
   safetensors (only an open pull request of that bot counts, as transformers does it);
2. with `--allow-pickle-weights`, the `.bin` itself through `torch.load(weights_only=True)`, which
   unpickles tensors and plain containers only, so no code in the file runs (transformers' default
   since torch 2.6, which it requires for this).
The method and the revision go into provenance (`meta.model.weights`). transformers' own habit of
asking the Hub to create a conversion while loading is switched off: loading never writes anywhere.
"""

from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import HfApi, constants, try_to_load_from_cache

from queerbias.errors import QueerbiasError

log = logging.getLogger(__name__)

SAFETENSORS = "safetensors"
CONVERSION = "the Hub's safetensors conversion"
PICKLE = "torch.load(weights_only=True)"
CONVERTER = "SFconvertbot"
CONVERSION_TITLE = "Adding `safetensors` variant of this model"
_SAFE_FILES = ("model.safetensors", "model.safetensors.index.json")
_PICKLE_SUFFIXES = (".bin", ".pt", ".pth")


@dataclass(frozen=True)
class WeightsSource:
    """How `from_pretrained` reads the weights: the method and, for the conversion, its revision."""

    method: str
    revision: str | None = None

    def load_options(self) -> dict:
        options: dict = {"use_safetensors": self.method != PICKLE}
        if self.revision is not None:
            options["revision"] = self.revision
        return options

    def describe(self) -> dict:
        kind = "pytorch pickle (.bin)" if self.method == PICKLE else "safetensors"
        return {"format": kind, "method": self.method, **({"revision": self.revision} if self.revision else {})}


def locate_weights(path: str, revision: str | None, allow_pickle: bool, api=None) -> WeightsSource:
    """The source of `path`'s weights (a folder or a Hub id); refuses pickles unless `allow_pickle`.
    `api` is a `huggingface_hub.HfApi` (None: a default one, when online)."""
    folder = Path(path).expanduser()
    if folder.is_dir():
        return _local(folder, allow_pickle)
    return _hub(path, revision, allow_pickle, api)


def _local(folder: Path, allow_pickle: bool) -> WeightsSource:
    names = [p.name for p in folder.iterdir()]
    if any(name.endswith(".safetensors") for name in names) or not any(name.endswith(_PICKLE_SUFFIXES)
                                                                       for name in names):
        return WeightsSource(SAFETENSORS)
    return _pickle_or_refuse(str(folder), allow_pickle, "")


def _hub(repo: str, revision: str | None, allow_pickle: bool, api) -> WeightsSource:
    files = _hub_files(repo, revision, api)
    if files is None:  # offline: what the local cache holds
        if any(_cached(repo, name, revision) for name in _SAFE_FILES):
            return WeightsSource(SAFETENSORS)
        conversion = cached_conversion(repo) if revision in (None, "main") else None
        if conversion is not None:  # fetched online before (`study prefetch`): the same way in, offline
            return WeightsSource(CONVERSION, conversion)
        return WeightsSource(PICKLE) if allow_pickle else WeightsSource(SAFETENSORS)
    if any(name.endswith(".safetensors") for name in files) or not any(name.endswith(_PICKLE_SUFFIXES)
                                                                       for name in files):
        return WeightsSource(SAFETENSORS)
    if revision in (None, "main"):
        conversion = conversion_revision(repo, api)
        if conversion is not None:
            return WeightsSource(CONVERSION, conversion)
    return _pickle_or_refuse(repo, allow_pickle, " and no safetensors conversion on the Hub")


def _pickle_or_refuse(where: str, allow_pickle: bool, conversion: str) -> WeightsSource:
    if allow_pickle:
        return WeightsSource(PICKLE)
    raise QueerbiasError(f"{where} has only pickled PyTorch weights (.bin){conversion}; pass --allow-pickle-weights "
                         "(allow_pickle_weights: true) to read them with torch.load(weights_only=True), which "
                         "unpickles tensors only, so no code in the file runs")


def conversion_revision(repo: str, api=None) -> str | None:
    """`refs/pr/N` of the open safetensors-conversion pull request of the Hub's bot on `repo`, if any."""
    api = api or _default_api()
    if api is None:
        return None
    try:
        for discussion in api.get_repo_discussions(repo, discussion_type="pull_request", discussion_status="open"):
            if discussion.author == CONVERTER and discussion.title == CONVERSION_TITLE:
                return f"refs/pr/{discussion.num}"
    except Exception as err:  # huggingface_hub raises many types when offline or refused
        log.info("cannot list the pull requests of %s (%s)", repo, err)
    return None


def cached_conversion(repo: str) -> str | None:
    """`refs/pr/N` of a safetensors conversion the Hugging Face cache holds for `repo` (the highest N), so
    that a run on a machine without network reads the weights a run with it read (`_hub`)."""
    from huggingface_hub import constants
    from huggingface_hub.file_download import repo_folder_name

    refs = Path(constants.HF_HUB_CACHE) / repo_folder_name(repo_id=repo, repo_type="model") / "refs" / "refs" / "pr"
    numbers = sorted((int(ref.name) for ref in refs.iterdir() if ref.name.isdigit()), reverse=True) \
        if refs.is_dir() else []
    return next((f"refs/pr/{number}" for number in numbers
                 if any(_cached(repo, name, f"refs/pr/{number}") for name in _SAFE_FILES)), None)


def _hub_files(repo: str, revision: str | None, api) -> list[str] | None:
    api = api or _default_api()
    if api is None:
        return None
    try:
        return api.list_repo_files(repo, revision=revision)
    except Exception as err:  # offline, gated or unknown repositories: from_pretrained says which
        log.info("cannot list the files of %s (%s); reading what the cache holds", repo, err)
        return None


def _default_api():
    return None if constants.HF_HUB_OFFLINE else HfApi()


def _cached(repo: str, name: str, revision: str | None) -> bool:
    return isinstance(try_to_load_from_cache(repo, name, revision=revision), str)


@contextlib.contextmanager
def no_conversion_requests():
    """transformers asks the Hub to convert a `.bin`-only repository while loading it; not from here."""
    previous = os.environ.get("DISABLE_SAFETENSORS_CONVERSION")
    os.environ["DISABLE_SAFETENSORS_CONVERSION"] = "1"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("DISABLE_SAFETENSORS_CONVERSION", None)
        else:
            os.environ["DISABLE_SAFETENSORS_CONVERSION"] = previous
