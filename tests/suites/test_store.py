"""The run store for every suite: resume after an interruption, two processes, bad progress files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from queerbias.errors import DataError, QueerbiasError
from queerbias.suites.gifi.config import GifiConfig
from queerbias.suites.gruff.declaration import GruffSettings
from queerbias.suites.lou.declaration import LouSettings
from queerbias.suites.pairs.declaration import PairSettings
from queerbias.suites.registry import get_suite
from queerbias.suites.store import _chunks, run_to_dir
from tiny_data import write_lou_folder, write_templates

REPO = Path(__file__).resolve().parents[2]


def cases(tmp_path: Path) -> dict:
    """Per suite: data spec and small settings with chunks of a few items."""
    return {
        "pairs": (None, PairSettings(sample=12, chunk_pairs=4)),
        "gruff": (str(write_templates(tmp_path / "gruff")), GruffSettings(sample=4, settings=("none", "d0"),
                                                                          chunk_items=3)),
        "lou": (str(write_lou_folder(tmp_path / "lou")), LouSettings(tasks=("x-stance-de",), n_resamples=50,
                                                                      chunk_instances=2)),
        "gifi": (None, GifiConfig(groups=("er", "xier"), dimensions=("GDR", "SA"), sample=1, max_new_tokens=4,
                                  saof_names=1, saof_samples=1, batch_size=2, n_resamples=20)),
    }


class Interrupted(Exception):
    """Stands for a kill: raised after some chunks were saved."""


@pytest.mark.parametrize("name", ["pairs", "gruff", "lou", "gifi"])
def test_every_suite_resumes_where_it_stopped(name, tiny_gpt2, tmp_path):
    suite = get_suite(name)
    data, settings = cases(tmp_path)[name]
    whole = run_to_dir(suite, str(tiny_gpt2), data, tmp_path / "whole", settings, progress=False)

    evaluate, seen = suite.evaluate, []

    def stops_after_two(lm, chunks, settings):
        for count, rows in enumerate(evaluate(lm, chunks, settings)):
            if count == 2:
                raise Interrupted
            yield rows

    def counts(lm, chunks, settings):
        chunks = list(chunks)
        seen.extend(chunks)
        return evaluate(lm, chunks, settings)

    suite.evaluate = stops_after_two
    with pytest.raises(Interrupted):
        run_to_dir(suite, str(tiny_gpt2), data, tmp_path / "resumed", settings, progress=False)
    assert not (tmp_path / "resumed" / "summary.json").exists()
    suite.evaluate = counts
    resumed = run_to_dir(suite, str(tiny_gpt2), data, tmp_path / "resumed", settings, progress=False)
    total = whole["meta"]["data"]["n_items"]
    first_two = sum(len(chunk) for chunk in _chunks(list(range(total)), suite.chunk_size(settings), suite.even_chunks)[:2])
    assert sum(len(chunk) for chunk in seen) == total - first_two  # only what was missing
    assert (tmp_path / "resumed" / suite.items_file).read_bytes() == (tmp_path / "whole" / suite.items_file).read_bytes()
    assert resumed["headline"] == whole["headline"] and not (tmp_path / "resumed" / ".partial").exists()


@pytest.mark.parametrize(("line", "message"), [
    ("null", "expected an object with run, chunk and rows"),
    ('{"run": "KEY", "chunk": 0, "rows": [{"score_more": NaN}]}', "non-finite number NaN"),
    ("[1, 2]", "expected an object with run, chunk and rows"),
    ('{"run": "KEY", "chunk": 0, "rows": "all"}', "expected an object with run, chunk and rows"),
])
def test_a_bad_progress_line_is_refused_naming_file_and_line(line, message, tiny_gpt2, tmp_path):
    suite, (data, settings) = get_suite("pairs"), cases(tmp_path)["pairs"]
    partial = tmp_path / "out" / ".partial"
    partial.mkdir(parents=True)
    (partial / "rank0.jsonl").write_text(line + "\n")
    with pytest.raises(DataError, match=rf"rank0.jsonl, row 1: .*{message}"):
        run_to_dir(suite, str(tiny_gpt2), data, tmp_path / "out", settings, progress=False)


def test_a_line_cut_short_by_a_kill_is_evaluated_again(tiny_gpt2, tmp_path):
    suite, (data, settings) = get_suite("pairs"), cases(tmp_path)["pairs"]
    whole = run_to_dir(suite, str(tiny_gpt2), data, tmp_path / "whole", settings, progress=False)
    partial = tmp_path / "out" / ".partial"
    partial.mkdir(parents=True)
    (partial / "rank0.jsonl").write_text('{"run": "' + whole["meta"]["run_key"] + '", "chunk": 0, "rows": [{"pa')
    again = run_to_dir(suite, str(tiny_gpt2), data, tmp_path / "out", settings, progress=False)
    assert again["headline"] == whole["headline"]


def test_a_model_that_outputs_nan_is_refused_not_scored_unbiased(tiny_gpt2, tmp_path):
    """One NaN weight must not give a perfect bias score (issue 16): nothing is written."""
    import torch

    from queerbias.models import load_model

    lm = load_model(str(tiny_gpt2))
    with torch.no_grad():
        lm.model.transformer.ln_f.weight[0] = float("nan")  # every logit becomes NaN
    for name in ("pairs", "gruff"):
        suite, (data, settings) = get_suite(name), cases(tmp_path)[name]
        with pytest.raises(QueerbiasError, match="non-finite|NaN"):
            run_to_dir(suite, lm, data, tmp_path / name, settings, progress=False)
        assert not (tmp_path / name / "summary.json").exists()


@pytest.mark.slow
def test_two_processes_write_what_one_writes(tiny_gpt2, tmp_path):
    """gruff, lou and gifi under `accelerate launch` with 2 processes: the same rows as one process."""
    found = cases(tmp_path)
    script = tmp_path / "run_suites.py"
    script.write_text(
        "import sys, pickle\n"
        "from queerbias.suites.registry import get_suite\n"
        "from queerbias.suites.store import run_to_dir\n"
        "model, out, cases = sys.argv[1], sys.argv[2], pickle.load(open(sys.argv[3], 'rb'))\n"
        "for name, (data, settings) in cases.items():\n"
        "    run_to_dir(get_suite(name), model, data, f'{out}/{name}', settings, progress=False)\n")
    import pickle

    chosen = {name: found[name] for name in ("gruff", "lou", "gifi")}
    (tmp_path / "cases.pkl").write_bytes(pickle.dumps(chosen))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    result = subprocess.run(
        [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
         "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no", str(script),
         str(tiny_gpt2), str(tmp_path / "two"), str(tmp_path / "cases.pkl")],
        capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    for name, (data, settings) in chosen.items():
        suite = get_suite(name)
        single = run_to_dir(suite, str(tiny_gpt2), data, tmp_path / "one" / name, settings, progress=False)
        summary = json.loads((tmp_path / "two" / name / "summary.json").read_text())
        assert summary["meta"]["environment"]["processes"] == 2 and summary["headline"] == single["headline"]
        assert (tmp_path / "two" / name / suite.items_file).read_bytes() == \
            (tmp_path / "one" / name / suite.items_file).read_bytes()


def test_in_memory_run_writes_nothing_and_matches_the_folder(tiny_gpt2, tmp_path):
    """`evaluate_run`, the Python API's in-memory mode: the same figures, no files."""
    from queerbias.suites.store import evaluate_run, load_run

    suite, (data, settings) = get_suite("pairs"), cases(tmp_path)["pairs"]
    written = run_to_dir(suite, str(tiny_gpt2), data, tmp_path / "out", settings, progress=False)
    before = set(tmp_path.rglob("*"))
    record = evaluate_run(suite, str(tiny_gpt2), data, settings, label="memory")
    assert set(tmp_path.rglob("*")) == before
    assert record.summary["headline"] == written["headline"] and record.path is None
    assert record.rows().equals(load_run(tmp_path / "out").rows())



@pytest.mark.parametrize(("n", "size"), [(378, 128), (300, 128), (198, 128), (129, 128), (120, 128), (5, 128),
                                          (1, 128), (0, 128), (10, 4)])
def test_two_processes_get_equal_shares_of_contiguous_chunks(n, size):
    """Chunks go to the processes in turn: an even number of chunks of sizes within one gives two processes
    equal shares (378 pairs in chunks of 128 used to give 256 to one process and 122 to the other)."""
    items = list(range(n))
    chunks = _chunks(items, size)
    assert [item for chunk in chunks for item in chunk] == items and all(0 < len(c) <= size for c in chunks)
    assert len(chunks) == -(-n // size) + (-(-n // size) % 2 if n > 1 else 0)  # 120 items of 128: two chunks
    if len(chunks) > 1:
        first, second = (sum(len(c) for c in chunks[p::2]) for p in (0, 1))
        assert abs(first - second) <= len(chunks) // 2


def test_a_saved_chunk_of_another_chunking_is_evaluated_again(tiny_gpt2, tmp_path):
    """A progress line with this chunk's index and item count but another start (a resume with another
    chunk size) is not this chunk's result: it is evaluated again, not reused."""
    from queerbias.suites import integrity
    from queerbias.suites.store import load_run

    suite = get_suite("pairs")
    settings = PairSettings(sample=16, chunk_pairs=4)  # 4 chunks of 4
    whole = run_to_dir(suite, str(tiny_gpt2), None, tmp_path / "whole", settings, progress=False)
    # chunk 1's rows, flipped, saved as chunk 0 with chunk 1's start: must not stand for chunk 0
    flipped = [{**row, "biased": 1 - row["biased"]} for row in load_run(tmp_path / "whole").rows().iloc[4:8].to_dict("records")]
    out = tmp_path / "shifted"
    (out / ".partial").mkdir(parents=True)
    (out / ".partial" / "rank0.jsonl").write_text(
        json.dumps(integrity.chunk_record(whole["meta"]["run_key"], 0, 4, 4, flipped)) + "\n")
    resumed = run_to_dir(suite, str(tiny_gpt2), None, out, settings, progress=False)
    assert resumed["headline"] == whole["headline"]
