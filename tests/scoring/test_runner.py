"""The output contract, resuming after a kill, and the 2-process accelerate run."""

import csv
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from queerbias import killpoint
from queerbias.errors import QueerbiasError
from queerbias.pairs.resolve import load_pairs
from queerbias.pairs.sampling import sample_pairs
from queerbias.suites.pairs.suite import PairsSuite
from queerbias.suites.store import run_to_dir

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "queerbias.cli"]


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def small_set():
    return sample_pairs(load_pairs("queerbias-de"), 60, seed=1)


def test_output_contract(tiny_gpt2, small_set, tmp_path):
    summary = run_to_dir(PairsSuite(), str(tiny_gpt2), small_set, tmp_path, progress=False)
    rows = read_csv(tmp_path / "pairs.csv")
    assert len(rows) == 60
    assert {"pair_id", "group", "sent_more", "sent_less", "score_more", "score_less",
            "biased", "soft"} <= set(rows[0])
    on_disk = json.loads((tmp_path / "summary.json").read_text())
    assert on_disk == summary
    assert set(summary["overall"]) == {"n", "n_neutral", "bias_score", "bias_se", "soft_score", "soft_se"}
    biased = sum(int(r["biased"]) for r in rows)
    assert summary["overall"]["bias_score"] == pytest.approx(100 * biased / 60, abs=1e-4)
    for group, figures in summary["groups"].items():
        assert figures["n"] == sum(r["group"] == group for r in rows)
    meta = summary["meta"]
    assert meta["model"]["fingerprint"].startswith("sha256:")
    assert meta["data"]["checksum"] == small_set.checksum
    assert meta["scoring"]["deviations"] == {} and meta["versions"]["torch"]
    assert "biased" in (tmp_path / "summary.md").read_text() or "bias score" in (tmp_path / "summary.md").read_text()
    assert not (tmp_path / ".partial").exists()


def test_finished_run_is_kept_and_a_different_one_refused(tiny_gpt2, tiny_llama, small_set, tmp_path):
    first = run_to_dir(PairsSuite(), str(tiny_gpt2), small_set, tmp_path, progress=False)
    again = run_to_dir(PairsSuite(), str(tiny_gpt2), small_set, tmp_path, progress=False)
    assert again["meta"]["created_at"] == first["meta"]["created_at"]
    with pytest.raises(QueerbiasError, match="--overwrite"):
        run_to_dir(PairsSuite(), str(tiny_llama), small_set, tmp_path, progress=False)
    other = run_to_dir(PairsSuite(), str(tiny_llama), small_set, tmp_path, progress=False, overwrite=True)
    assert other["meta"]["model"]["fingerprint"] != first["meta"]["model"]["fingerprint"]


def test_resume_after_kill_matches_uninterrupted_run(tiny_bert, tmp_path):
    full = tmp_path / "full"
    # 12 chunks of 10 pairs: killed after 6, so the resumed run reads 6 from disk and scores 6 (what 400 pairs and
    # a kill after 30 of 40 chunks tested, at a third of the scoring)
    run_to_dir(PairsSuite(), str(tiny_bert), sample_pairs(load_pairs("queerbias-de"), 120, seed=3), full,
                 progress=False)
    killed = tmp_path / "killed"
    command = CLI + ["score", "--model", str(tiny_bert), "--pairs", "queerbias-de", "--sample",
                     "120", "--seed", "3", "--out", str(killed), "--chunk-pairs", "10",
                     "--batch-size", "4", "--no-progress"]
    # killed by itself right after its 6th chunk is saved (queerbias.killpoint), not after a wait
    killed_run = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env={**os.environ, killpoint.ENV: "chunk:6"})
    assert killed_run.returncode == -signal.SIGKILL
    assert not (killed / "summary.json").exists(), "a killed run must not look complete"
    assert (killed / ".partial" / "rank0.jsonl").read_text().count("\n") == 6
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "resuming" in result.stderr
    assert read_csv(killed / "pairs.csv") == read_csv(full / "pairs.csv")


def test_cli_multi_model_table(tiny_gpt2, tiny_llama, tmp_path):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("Gender_ID_x,Gender_ID_y,sent_x,sent_y\n"
                     "Gay,Straight,Schwule Männer sind nett.,Heterosexuelle Männer sind nett.\n"
                     "Lesbian,Straight,Lesbische Frauen sind klug.,Cis Frauen sind klug.\n",
                     encoding="utf-8")
    result = subprocess.run(CLI + ["score", "--model", str(tiny_gpt2), "--model", str(tiny_llama),
                                   "--pairs", str(pairs), "--out", str(tmp_path / "out"),
                                   "--no-progress"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "scores.md").exists()
    assert "Mean" in result.stdout


def test_bad_pairs_file_is_one_clear_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    result = subprocess.run(CLI + ["score", "--pairs", str(bad)], capture_output=True, text=True)
    assert result.returncode == 2
    assert f"{bad}, row 1: missing columns" in result.stderr
    assert "Traceback" not in result.stderr


def test_two_process_accelerate_run_equals_single(tiny_llama, tmp_path):
    single = tmp_path / "single"
    run_to_dir(PairsSuite(), str(tiny_llama), sample_pairs(load_pairs("queerbias-de"), 50, seed=2), single,
                 progress=False)
    double = tmp_path / "double"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
         "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
         str(REPO / "eval" / "score.py"), "--model", str(tiny_llama), "--pairs", "queerbias-de",
         "--sample", "50", "--seed", "2", "--out", str(double), "--no-progress"],
        capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((double / "summary.json").read_text())
    assert summary["meta"]["environment"]["processes"] == 2
    assert read_csv(double / "pairs.csv") == read_csv(single / "pairs.csv")
