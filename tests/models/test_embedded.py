"""The embedded models' cache: built once by whichever process of a distributed launch gets there
first, and complete whichever it was (a real two-process gloo group, rank 1 building first)."""

from __future__ import annotations

import os
from pathlib import Path

import torch.distributed as dist
import torch.multiprocessing as mp

from queerbias.models.embedded import prepare_embedded, random_weights
from queerbias.models.loading import load_model


def _rank_main(rank: int, cache: str, store: str) -> None:
    os.environ["QUEERBIAS_CACHE"] = cache
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=2)
    try:
        if rank == 1:  # the build lock's winner is not the main process
            prepare_embedded("embedded:tiny")
        dist.barrier()
        if rank == 0:
            prepare_embedded("embedded:tiny")
    finally:
        dist.destroy_process_group()


def test_a_process_of_rank_1_builds_a_complete_cache(tmp_path):
    cache = tmp_path / "cache"
    mp.spawn(_rank_main, args=(str(cache), str(tmp_path / "store")), nprocs=2, join=True)
    folder = cache / "models" / "tiny"
    assert {"config.json", "model.safetensors", "tokenizer.json", "queerbias-complete"} <= {
        p.name for p in folder.iterdir()}
    load_model(str(folder))  # loads as a model folder, weights and all


def test_a_folder_marked_complete_without_weights_is_built_again(tmp_path, monkeypatch):
    """What the rank-1 build of an earlier version left: a tokenizer and the mark, no model."""
    monkeypatch.setenv("QUEERBIAS_CACHE", str(tmp_path))
    broken = tmp_path / "models" / "tiny"
    broken.mkdir(parents=True)
    (broken / "queerbias-complete").write_text("tiny\n")
    (broken / "tokenizer.json").write_text("{}")
    folder = prepare_embedded("embedded:tiny")
    assert Path(folder) == broken and (broken / "model.safetensors").is_file()
    load_model(str(folder))


def test_random_weights_are_known_by_spec_so_reports_can_say_so(tiny_gpt2, tiny_bert, tmp_path):
    """`embedded:tiny` and the test suite's tiny models (their config.json says so) have random weights; the
    embedded Gemma, a Hub id and a folder without the key do not (issue 51: a study page labels such models)."""
    (tmp_path / "config.json").write_text('{"model_type": "gpt2"}')
    assert [random_weights(spec) for spec in ("embedded:tiny", str(tiny_gpt2), str(tiny_bert))] == [True] * 3
    assert [random_weights(spec) for spec in ("embedded:gemma-3-270m", "gpt2", str(tmp_path))] == [False] * 3
