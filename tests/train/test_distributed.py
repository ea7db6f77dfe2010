"""Two CPU processes over gloo under `accelerate launch` (--multi_gpu starts two on a
machine without GPUs; --cpu would start one)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import REPO, small_config, write_config


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _launch(config: dict, tmp_path):
    path = write_config(tmp_path / "c.yaml", config)
    accelerate = Path(sys.executable).with_name("accelerate")
    command = [str(accelerate), "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
               "--mixed_precision", "no", "--dynamo_backend", "no",
               "--main_process_port", str(_free_port()), str(REPO / "train" / "finetune.py"),
               "--config", str(path)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240,
                          check=False)
    assert done.returncode == 0, "\n".join(l for l in done.stderr.splitlines() if "error" in l.lower())[-3000:]
    return done


@pytest.mark.slow
def test_two_process_launch(tiny_llama, tmp_path):
    config = small_config(tiny_llama, tmp_path / "run", max_steps=2, eval_every=2, examples_per_device=2)
    done = _launch(config, tmp_path)
    # with working barriers no process sees another's half-finished scoring
    assert "already holds" not in done.stderr and "resuming:" not in done.stderr
    run = tmp_path / "run"
    assert (run / "checkpoint-2" / "queerbias-complete").is_file()
    summary = json.loads((run / "checkpoint-2" / "bias" / "summary.json").read_text())
    assert summary["meta"]["environment"]["processes"] == 2
    lines = (run / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["step"] for line in lines] == [0, 2]
    assert (run / "compare" / "bias" / "delta.json").is_file()
    assert "model-index:" in (run / "final" / "README.md").read_text()  # the main process wrote the card
    assert (run / "checkpoint-2" / "rng_state_1.pth").is_file()  # both ranks saved their RNG


@pytest.mark.slow
@pytest.mark.parametrize("family,objective,extra", [
    # the group term and the counterfactual pairing term on mined and template pairs, with the base anchor
    ("tiny_llama", "equalise", {"pairs__train": "queerbias-de:train", "pairs__mine": ["corpus"],
                                "equalise__pairs_per_batch": 4, "equalise__group_term": 1.0,
                                "equalise__clp_term": 1.0, "equalise__anchor_term": 1.0}),
    # the demo's objective as the demo runs it: two processes, cells of each, both anchors on mined pairs
    ("tiny_llama", "contrast", {"pairs__train": "queerbias-de-contrast:train", "pairs__mine": ["corpus"],
                                "contrast__cells": 2, "contrast__mined_per_batch": 2}),
    ("tiny_llama", "dpo", {"pairs__train": "queerbias-de:train"}),
    ("tiny_bert", "cda", {}),
])
def test_two_process_mitigation(family, objective, extra, request, tmp_path):
    config = small_config(request.getfixturevalue(family), tmp_path / "run", max_steps=2, eval_every=2,
                          examples_per_device=2, objective=objective,
                          eval__benchmarks=[{"suite": "pairs", "data": "queerbias-de:test", "sample": 10}],
                          **extra)
    _launch(config, tmp_path)
    run = tmp_path / "run"
    summary = json.loads((run / "checkpoint-2" / "bias" / "summary.json").read_text())
    assert summary["meta"]["environment"]["processes"] == 2
    assert summary["meta"]["objective"] == objective
    assert (run / "final" / "adapter_model.safetensors").is_file()
    assert (run / "checkpoint-2" / "rng_state_1.pth").is_file()
