"""How long a command takes to refuse a bad input, whatever the model (issue 34).

Every refusal of a bad path, number or file must come before any model loads, so its time is
the CLI's start plus the check, the same for the embedded Gemma 3 270M as for no model at all.
Each case runs the real CLI in a fresh process (`python -m queerbias.cli`) and is timed from
launch to exit; a case must exit with status 2 and one error line. Also measured: a seeded
`--sample 5` of a 1,000,000-row pair file, read from the stream (`pairs.io.read_pairs(sample=)`)
against parsing every row first (what `--sample` did before), and `queerbias --version` as
the floor (the interpreter and the CLI's imports).

    python bench/refusal_time.py [--rows 1000000] [--model embedded:gemma-3-270m]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks_md import write_section  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
HEADER = "sent_more,sent_less,stereo_antistereo,bias_type\n"
ROWS = "Schwule Männer sind nett.,Heterosexuelle Männer sind nett.,stereo,gay\n" \
       "Lesbische Frauen sind klug.,Cis Frauen sind klug.,stereo,lesbian\n"


def inputs(root: Path, model: str) -> list[tuple[str, list[str]]]:
    """(case, argv) of bad inputs, one per kind of check, each naming `model`."""
    (root / "X").mkdir()
    (root / "X" / "pairs.csv").write_text(HEADER + ROWS, encoding="utf-8")
    pairs = str(root / "X" / "pairs.csv")
    trainer = root / "hf-run" / "checkpoint-100"
    trainer.mkdir(parents=True)
    (trainer / "trainer_state.json").write_text("{}\n")
    config = {"model": model, "output_dir": str(root / "hf-run"), "data": {"train": str(REPO / "corpora" / "demo")},
              "eval": {"benchmarks": [{"suite": "pairs", "data": "queerbias-de:test", "sample": 4}]}}
    (root / "train.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    (root / "seed.yaml").write_text(yaml.safe_dump({**config, "output_dir": str(root / "r"), "seed": 2**32}))
    study = {"output_dir": str(root / "S"), "models": {"m": model}, "runs": {"lm": {"overrides": {"objective": "lm"}}},
             "seeds": [0], "training": {"overrides": {"data": {"train": str(REPO / "corpora" / "demo")}}},
             "benchmarks": [{"suite": "pairs", "data": "queerbias-de:test", "sample": 4}]}
    (root / "S").mkdir()
    (root / "S" / "study.yaml").write_text(yaml.safe_dump(study), encoding="utf-8")
    return [
        ("score: --out holds the split's pair file", ["score", "--pairs", f"{pairs}:test?by=group", "--model", model,
                                                      "--out", str(root / "X")]),
        ("score: empty --pairs", ["score", "--pairs", "", "--model", model]),
        ("score: seed 2^32", ["score", "--pairs", pairs, "--model", model, "--seed", str(2**32)]),
        ("score: a bad pair row", ["score", "--pairs", str(_bad_pairs(root)), "--model", model,
                                   "--out", str(root / "o")]),
        ("export: --out holds the split's pair file", ["export", "lm-eval", "--pairs", f"{pairs}:train?by=group",
                                                       "--model", model, "--out", str(root / "X")]),
        ("compare: empty --out", ["compare", pairs, pairs, "--out", ""]),
        ("train: output_dir is a Trainer folder", ["train", "--config", str(root / "train.yaml")]),
        ("train: seed 2^32", ["train", "--config", str(root / "seed.yaml")]),
        ("study plan: the study file inside its output", ["study", "plan", "--config", str(root / "S" / "study.yaml")]),
    ]


def _bad_pairs(root: Path) -> Path:
    path = root / "bad.csv"
    path.write_text(HEADER + ROWS + "Trans Frauen sind \u200bstark.,Cis Frauen sind stark.,stereo,trans\n")
    return path


def timed(argv: list[str], env: dict) -> tuple[float, float, int, str]:
    """Wall and CPU seconds (user + system: what a loaded machine does not inflate) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "queerbias.cli", *argv], capture_output=True, text=True, env=env,
                          timeout=600)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    return seconds, cpu, done.returncode, errors[0] if len(errors) == 1 else f"{len(errors)} error lines"


def sample_times(root: Path, rows: int) -> tuple[float, float, list[str]]:
    """CPU seconds to take a seeded sample of 5 pairs from a `rows`-row file: streamed, and by parsing
    every row first; the pair ids must agree."""
    from queerbias.pairs.io import read_pairs
    from queerbias.pairs.sampling import sample_pairs

    rng = random.Random(0)
    path = root / "million.csv"
    with open(path, "w", encoding="utf-8") as sink:
        sink.write(HEADER)
        for i in range(rows):
            sink.write(f"Person {i} ist {rng.choice(['schwul', 'lesbisch', 'trans'])} und nett.,"
                       f"Person {i} ist hetero und nett.,stereo,{rng.choice(['gay', 'lesbian', 'trans'])}\n")
    started = time.process_time()  # CPU seconds: the machine's load does not inflate them
    streamed = read_pairs(path, sample=5, seed=0)
    stream_s = time.process_time() - started
    started = time.process_time()
    whole = sample_pairs(read_pairs(path), 5, 0)
    whole_s = time.process_time() - started
    assert [p.pair_id for p in streamed.pairs] == [p.pair_id for p in whole.pairs]
    return stream_s, whole_s, [p.pair_id for p in streamed.pairs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--model", default="embedded:gemma-3-270m")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        floor, floor_cpu, _, _ = timed(["--version"], env)
        lines = [f"Command: `python bench/refusal_time.py --rows {args.rows} --model {args.model}` (a fresh process "
                 f"per case, {args.threads} threads; `queerbias --version` takes {floor:.1f} s, {floor_cpu:.1f} s of "
                 "CPU: the floor). CPU seconds (user + system) are what the command costs; wall seconds grow with "
                 "the machine's load.", "",
                 "| bad input | exit | wall s | CPU s | refusal |", "|---|---:|---:|---:|---|"]
        worst = 0.0
        for case, argv in inputs(root, args.model):
            seconds, cpu, code, line = timed(argv, env)
            assert code == 2, (case, code, line)
            worst = max(worst, cpu)
            shown = line.split("error: ", 1)[-1].replace(str(root), "TMP")
            lines.append(f"| {case} | {code} | {seconds:.1f} | {cpu:.1f} | {shown[:80]}"
                         f"{'...' if len(shown) > 80 else ''} |")
            print(lines[-1], flush=True)
        stream_s, whole_s, ids = sample_times(root, args.rows)
    lines += ["", f"Most CPU of a refusal: {worst:.1f} s, {worst - floor_cpu:.1f} s above the floor. `--sample 5` of a "
                  f"{args.rows:,}-row pair file: {stream_s:.1f} s of CPU read from the stream, {whole_s:.1f} s parsing "
                  f"every row first ({whole_s / stream_s:.1f}x); the same pairs ({', '.join(ids)})."]
    body = "\n".join(lines)
    print(body)
    write_section("refusal_time", body)


if __name__ == "__main__":
    main()
