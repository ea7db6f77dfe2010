"""bench/gpu.sh: "no GPU" on a CPU-only machine, a working --cpu-smoke run, and its pieces.

The smoke run takes its Gemma config and tokenizer from an assets folder holding the tiny Gemma
(`tests/tiny_models.py`): the same code path as the real assets, without parsing the 262k
vocabulary six times and scoring over it in bfloat16 on one CPU thread (about 90 s). That the
real assets are what `gpu_assets.prepare` gathers from the embedded model is checked apart."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

from gpu_assets import GEMMA, gemma_folder, prepare  # noqa: E402
from gpu_bench import SMOKE, halving_batch, synthetic_set  # noqa: E402
from random_models import random_causal  # noqa: E402

from queerbias.pairs.resolve import load_pairs  # noqa: E402


def gpu_sh(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHON": sys.executable, "OMP_NUM_THREADS": "1"}
    return subprocess.run(["bash", str(REPO / "bench" / "gpu.sh"), *args], capture_output=True,
                          text=True, env=env, timeout=900)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_without_a_gpu_it_says_so_and_measures_nothing():
    run = gpu_sh()
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("no GPU")


def test_cpu_smoke_run_writes_the_gpu_table(tmp_path, tiny_gemma):
    target = tmp_path / "BENCHMARKS.md"
    target.write_text("# Benchmarks\n\n<!-- gpu:begin -->\nold\n<!-- gpu:end -->\n\nkept\n")
    assets = tmp_path / "assets"
    (assets / GEMMA).mkdir(parents=True)
    for file in tiny_gemma.iterdir():  # config and tokenizer, as gpu_assets gathers them (no weights)
        if file.name == "config.json" or file.name.startswith("tokenizer"):
            shutil.copy2(file, assets / GEMMA / file.name)
    run = gpu_sh("--cpu-smoke", "--threads", "1", "--assets", str(assets), "--write", str(target))
    assert run.returncode == 0, run.stderr[-3000:]
    text = target.read_text()
    assert "old" not in text and text.endswith("kept\n")
    rows = [line for line in text.splitlines() if line.startswith("| ") and "pairs/s" not in line]
    assert {(r.split(" | ")[0], r.split(" | ")[1]) for r in rows} == {
        ("| Gemma 3 270M (causal)", "float32"), ("| Gemma 3 270M (causal)", "bfloat16"),
        ("| bert-base (masked)", "float32"), ("| bert-base (masked)", "bfloat16")}
    assert "error" not in text, text
    assert "tokens/s" in text.split("<!-- gpu:end -->")[0]


@pytest.mark.slow
def test_the_assets_hold_the_embedded_gemmas_config_and_tokenizer_unchanged(tmp_path):
    """What travels to the GPU machine unpacks to the embedded model's own files, byte for byte, and
    its config builds the smoke run's random Gemma (the smoke test itself runs on the tiny Gemma's)."""
    from queerbias.models.embedded import prepare_embedded

    manifest = prepare(tmp_path / "assets", wheels=False)
    assert f"{GEMMA}/tokenizer.json.gz" in manifest["files"]
    assert not any(name.endswith(".safetensors") for name in manifest["files"])  # no weights travel
    unpacked = gemma_folder(tmp_path / "assets", tmp_path / "gemma")
    cache = prepare_embedded(f"embedded:{GEMMA}")
    names = sorted(p.name for p in unpacked.iterdir())
    assert names == ["config.json", "tokenizer.json", "tokenizer_config.json"]
    assert all((unpacked / name).read_bytes() == (cache / name).read_bytes() for name in names)
    random = random_causal(tmp_path / "random", unpacked, **SMOKE.gemma)
    config = json.loads((random / "config.json").read_text())
    assert config["architectures"] == ["Gemma3ForCausalLM"] and config["num_hidden_layers"] == 2
    assert config["vocab_size"] == json.loads((cache / "config.json").read_text())["vocab_size"]


def test_training_backs_off_to_smaller_batches_on_out_of_memory():
    tried = []

    def train(batch, accumulation):
        tried.append((batch, accumulation))
        if batch > 2:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return "trained"

    assert halving_batch(train, 8, 1) == "trained"
    assert tried == [(8, 1), (4, 2), (2, 4)]
    with pytest.raises(torch.OutOfMemoryError):
        halving_batch(lambda b, a: (_ for _ in ()).throw(torch.OutOfMemoryError("always")), 2, 1)


def test_synthetic_set_keeps_the_source_reuse_and_grows_the_sentences():
    source = load_pairs("queerbias-de").pairs
    synthetic = synthetic_set(source, 8 * len(source) - 5)
    assert len(synthetic) == 8 * len(source) - 5
    assert len({p.pair_id for p in synthetic}) == len(synthetic)
    sentences = {s for p in source for s in (p.sent_more, p.sent_less)}
    first_copy = {s for p in synthetic[:len(source)] for s in (p.sent_more, p.sent_less)}
    assert len(first_copy) == len(sentences)  # each copy reuses sentences exactly as the source
    assert synthetic[len(source)].sent_more.split(" ", 1)[1] == source[0].sent_more
