"""`queerbias study prefetch STUDY` (issue 46): every model and data set a prepared study reads, fetched once
by the code the runs use, into the caches the Slurm tasks read offline. A model named by its Hub id is
served from a Hugging Face cache laid out as the Hub client lays it out (this machine has no network):
the same code path an online prefetch takes, up to the download itself."""

from __future__ import annotations

import shutil

from .helpers import BENCHMARKS, TRAINING, run_cli, study_config, write_study

HUB_ID = "queerbias-test/tiny-gpt2"


def _hub_cache(home, folder) -> None:
    """FOLDER as the Hugging Face cache under HOME holds a downloaded snapshot of HUB_ID."""
    repo = home / "hub" / ("models--" + HUB_ID.replace("/", "--"))
    commit = "0" * 40
    shutil.copytree(folder, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)


def test_prefetch_fetches_each_model_and_data_set_once_and_the_tasks_read_that_cache(tiny_bert, tiny_gpt2, tmp_path):
    home = tmp_path / "hf"
    _hub_cache(home, tiny_gpt2)
    root = tmp_path / "STUDY"
    config = write_study(tmp_path / "study.yaml", study_config(
        root, {"hub": HUB_ID, "bert": str(tiny_bert)}, seeds=[0, 1], runs={"lm": {"overrides": {"objective": "lm"}}},
        training={"overrides": TRAINING}, benchmarks=BENCHMARKS))
    env = {"HF_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    assert run_cli("study", "plan", "--config", str(config), cwd=tmp_path, env=env).returncode == 0
    fetched = run_cli("study", "prefetch", str(root), cwd=tmp_path, env=env)
    assert fetched.returncode == 0, fetched.stderr[-2000:]
    lines = fetched.stdout.splitlines()
    assert lines[-1] == f"fetched what the 4 cells of {root} read"
    assert [line.split(":")[0] for line in lines[:-1]] == [
        "benchmark absent", f"model {HUB_ID}", "benchmark bias", "benchmark knowledge",
        "corpus " + TRAINING["data"]["train"], "validation " + TRAINING["data"]["train"] + "/validation.jsonl",
        f"model {tiny_bert}"]  # each once, in the order the cells read them
    assert "benchmark bias: queerbias-de:test[sample 12, seed 0], 12 items, sha256:" in fetched.stdout
    assert f"model {HUB_ID}: causal, weights sha256:" in fetched.stdout
    script = (root / "slurm-array.sh").read_text()
    assert f"export HF_HOME=${{HF_HOME:-{home}}}" in script and "HF_HUB_OFFLINE=${HF_HUB_OFFLINE:-1}" in script
