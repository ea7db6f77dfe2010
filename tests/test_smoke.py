"""The smoke path of the README: `models prepare tiny` builds the same model on every build, and the
smoke configs run as documented, showing on the way what a user should see: a bar for every
evaluation, tokens/s from the real tokens, and closing lines with the figures that move."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from queerbias.models.fingerprint import weights_fingerprint
from queerbias.models.tiny import build_tiny

REPO = Path(__file__).resolve().parents[1]


def readme_smoke_commands() -> list[list[str]]:
    """The commands of the README's smoke block, which sits below the two opening commands."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    opening = text.index("bash scripts/run.sh    # set up, then the main job")
    block = re.search(r"\*\*a one-minute try\*\*.*?```bash\n(.*?)```", text, re.S | re.I)
    assert block and block.start() > opening
    return [shlex.split(line.split("#")[0]) for line in block.group(1).splitlines() if line.strip()]


def test_two_builds_of_the_tiny_model_are_the_same_model(tmp_path):
    from transformers import AutoModelForCausalLM

    first, second = tmp_path / "a", tmp_path / "b"
    build_tiny(first)
    build_tiny(second)
    prints = [weights_fingerprint(AutoModelForCausalLM.from_pretrained(path)) for path in (first, second)]
    assert prints[0] == prints[1]
    assert (first / "tokenizer.json").read_bytes() == (second / "tokenizer.json").read_bytes()


def test_the_readme_smoke_path_runs(tmp_path):
    prepare, train, study = readme_smoke_commands()
    assert prepare[1:] == ["models", "prepare", "tiny"] and study[1:3] == ["study", "--config"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1",
           "QUEERBIAS_CACHE": str(tmp_path / "cache")}
    python = [sys.executable, "-m", "queerbias.cli"]
    made = subprocess.run([*python, *prepare[1:]], cwd=REPO, env=env, capture_output=True, text=True, check=False)
    assert made.returncode == 0 and "ready: embedded:tiny" in made.stdout, made.stderr[-2000:]
    assert "Loading weights" not in made.stderr and "Writing model shards" not in made.stderr
    run = subprocess.run([*python, *train[1:], f"output_dir={tmp_path / 'run'}"], cwd=REPO, env=env,
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    assert (tmp_path / "run" / "final" / "README.md").is_file()
    for bar in ("base: perplexity", "base: general perplexity", "base: bias", "base: knowledge", "step 4: bias"):
        assert f"{bar}: 100%" in run.stderr, bar  # every evaluation shows its progress
    rates = [float(rate) for rate in re.findall(r"tok/s=([\d.]+)", run.stderr)]
    assert rates and rates[-1] > 0
    closing = next(line for line in run.stdout.splitlines() if line.startswith("final (step 4): "))
    assert "pair_gap mean_abs_d " in closing and not re.search(r"pair_gap [\d.]+ -> ", closing)  # no margin
    plan = subprocess.run([*python, "study", "plan", "--config", study[3], "--out", str(tmp_path / "study")],
                          cwd=REPO, env=env, capture_output=True, text=True, check=False)
    assert plan.returncode == 0 and "Slurm (4 cells)" in plan.stdout, plan.stderr[-2000:]


def test_the_readme_states_hardware_and_dtype_beside_each_time():
    """A time or a figure depends on the machine and the precision (bf16 where the CPU has bf16
    instructions, fp32 elsewhere: the last digits differ): every paragraph with one says both."""
    blocks = re.split(r"\n\s*\n", (REPO / "README.md").read_text(encoding="utf-8"))
    timed = 0
    for index, block in enumerate(blocks):
        if re.search(r"\b\d+ min\b|\d+ minutes|a minute|few minutes", block) and not block.startswith("|"):
            said = blocks[index - 1] if block.startswith("```") else block  # a command block: its paragraph
            assert "hardware and dtype" in said and re.search(r"\b(bf16|fp32)\b", said), block[:200]
            timed += 1
    assert timed >= 3
