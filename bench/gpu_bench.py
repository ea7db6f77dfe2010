"""The GPU benchmark behind `bash bench/gpu.sh`: scoring pairs/s and training tokens/s on one GPU.

Measures, with random-weight models built from real configs (Gemma 3 270M: config and
tokenizer of the embedded model; bert-base: its config and a WordPiece vocabulary trained
here; speed does not depend on the weights):
- pairs/s of `score_pairs` on the full English WinoQueer v0 file, the full queerbias-de and
  a synthetic 45,540-pair set with WinoQueer's shape (below), in float32 and bfloat16;
- corpus tokens/s of the demo training config (configs/demo-gemma-lora.yaml, checkpoint
  evaluation off) on the random-weight Gemma; the equalising objective's pair passes are
  extra work the count does not include.
Writes one Markdown table into the `gpu` section of BENCHMARKS.md.

The synthetic set stands in for WinoQueer-DE (45,540 pairs, not available offline): the v0
pairs repeated 8 times, each copy behind its own German sentence adverb ("Angeblich ..."),
cut at 45,540. That keeps WinoQueer's reuse of sentences across pairs (what the scorer's
cache feeds on) and adds the words a German translation adds.

Robust by design, as it runs once on a borrowed machine: a measurement that fails (out of
memory even at the smallest batch, a missing package) becomes an `error` cell and the run
goes on; scoring halves its token budget on out-of-memory (`BatchSize`), training halves
its batch (doubling accumulation). Without CUDA it prints "no GPU" and stops, unless
`--cpu-smoke` asks for a tiny version of everything on the CPU (run by the tests).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))
if os.environ.get("QUEERBIAS_BENCH_SITE"):  # carried wheels (bench/gpu.sh): behind installed packages
    sys.path.append(os.environ["QUEERBIAS_BENCH_SITE"])

from benchmarks_md import BENCHMARKS_MD, write_section  # noqa: E402
from gpu_assets import DEFAULT_ASSETS, gemma_folder, prepare, v0_file  # noqa: E402
from random_models import random_bert, random_causal  # noqa: E402

SYNTHETIC_PAIRS = 45_540
ADVERBS = ["Angeblich", "Bekanntlich", "Offenbar", "Natürlich", "Tatsächlich", "Vermutlich",
           "Wahrscheinlich", "Eigentlich"]
DEMO_CONFIG = REPO / "configs" / "demo-gemma-lora.yaml"


@dataclass(frozen=True)
class Plan:
    """How big everything is: the full benchmark, or the CPU smoke version."""

    pairs: int | None  # pairs per set (None = all)
    synthetic: int
    train_steps: int
    gemma: dict  # config overrides for the causal model
    bert: dict  # BertConfig sizes
    bert_vocab: int
    train_overrides: tuple[str, ...] = ()


FULL = Plan(pairs=None, synthetic=SYNTHETIC_PAIRS, train_steps=24, gemma={}, bert={}, bert_vocab=30522)
SMOKE = Plan(pairs=24, synthetic=120, train_steps=2, train_overrides=("data.max_length=32",),
             gemma=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                        num_key_value_heads=1, head_dim=16, layer_types=["sliding_attention", "full_attention"]),
             bert=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2),
             bert_vocab=1000)


def synthetic_set(v0_pairs, n: int):
    """WinoQueer-shaped pairs: v0 behind one German adverb per copy, cut at n."""
    from queerbias.pairs.schema import Pair

    pairs = []
    for copy, adverb in enumerate(ADVERBS):
        for p in v0_pairs:
            pairs.append(Pair(f"syn{copy}-{p.pair_id}", f"{adverb} {p.sent_more}", f"{adverb} {p.sent_less}",
                              p.group, p.counterfactual_group, p.category, p.direction))
    return pairs[:n]


def pair_sets(assets: Path, plan: Plan) -> dict[str, list]:
    from queerbias.pairs.io import read_pairs
    from queerbias.pairs.resolve import load_pairs

    sets = {"queerbias-de": load_pairs("queerbias-de").pairs}
    v0 = v0_file(assets)
    if v0 is not None:
        sets["WinoQueer v0"] = read_pairs(v0, identical="keep").pairs
        sets["synthetic WinoQueer-DE shape"] = synthetic_set(sets["WinoQueer v0"], plan.synthetic)
    return {name: pairs[:plan.pairs] if plan.pairs and "synthetic" not in name else pairs
            for name, pairs in sets.items()}


def measure_scoring(lm, pairs: list) -> dict:
    from queerbias.scoring.config import ScoringConfig
    from queerbias.scoring.scorer import make_scorer
    from queerbias.suites.pairs.scoring import score_pairs

    score_pairs(make_scorer(lm, ScoringConfig()), pairs[:32])  # warm-up: kernels, allocator
    _sync()
    scorer = make_scorer(lm, ScoringConfig())  # a fresh cache: nothing scored yet
    started = time.perf_counter()
    score_pairs(scorer, pairs)
    _sync()
    seconds = time.perf_counter() - started
    del scorer
    _free()
    return {"seconds": seconds, "rate": len(pairs) / seconds}


def scoring_rows(label: str, folder: Path, dtype: str, sets: dict) -> list:
    """One row per pair set for one model in one dtype (loaded once)."""
    from queerbias.models import load_model

    loaded = attempt(lambda: {"lm": load_model(str(folder), dtype=dtype)})
    rows = []
    for name, pairs in sets.items():
        result = loaded if "error" in loaded else attempt(measure_scoring, loaded["lm"], pairs)
        rows.append((label, dtype, name, len(pairs), result))
        print(label, dtype, name, {k: v for k, v in result.items() if k != "lm"}, flush=True)
    loaded.clear()
    _free()
    return rows


def measure_training(folder: Path, out: Path, plan: Plan, threads: int | None) -> dict:
    """The demo config on the random-weight model, backing off on out-of-memory."""
    from queerbias.train.config import load_config
    from queerbias.train.runner import run_training

    steps = plan.train_steps
    base = load_config(DEMO_CONFIG, [f"model={folder}"])

    def train(batch: int, accumulation: int) -> dict:
        config = load_config(DEMO_CONFIG, [
            f"model={folder}", f"output_dir={out / f'batch-{batch}'}", f"max_steps={steps}",
            f"eval_every={steps}", f"logging_steps={steps}", f"examples_per_device={batch}", f"grad_accum={accumulation}",
            "eval.benchmarks=[{suite: pairs, sample: 2}]", "eval.perplexity=false",  # a run needs a benchmark
            f"threads={threads if threads else 'null'}",
            "report_to=none", *plan.train_overrides])
        started = time.perf_counter()
        run_training(config)
        wall = time.perf_counter() - started
        state = json.loads((out / f"batch-{batch}" / f"checkpoint-{steps}" / "trainer_state.json").read_text())
        final = next(e for e in reversed(state["log_history"]) if "train_runtime" in e)
        return {"tokens": final["num_input_tokens_seen"], "seconds": final["train_runtime"],
                "rate": final["num_input_tokens_seen"] / final["train_runtime"], "wall": wall,
                "batch": f"{batch} x {accumulation}", "precision": config.precision}

    return halving_batch(train, base.examples_per_device, base.grad_accum)


def halving_batch(train, batch: int, accumulation: int):
    """`train(batch, accumulation)`; after an out-of-memory error again with half the batch and
    twice the accumulation (the same effective batch), down to a batch of one."""
    while True:
        try:
            return train(batch, accumulation)
        except torch.OutOfMemoryError:
            _free()
            if batch == 1:
                raise
            batch, accumulation = batch // 2, accumulation * 2
            print(f"out of memory: training again with batch {batch} x {accumulation}", flush=True)


def attempt(measure, *args) -> dict:
    """Run one measurement; a failure becomes an error cell, not the end of the run."""
    try:
        return measure(*args)
    except Exception as err:  # noqa: BLE001 - one borrowed run must report every row it can
        _free()
        return {"error": f"{type(err).__name__}: {str(err).splitlines()[0][:120] if str(err) else ''}"}


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _free() -> None:
    import gc

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def run(args) -> str | None:
    cuda = torch.cuda.is_available()
    if not cuda and not args.cpu_smoke:
        print("no GPU: torch sees no CUDA device here, so nothing was measured "
              "(`bash bench/gpu.sh --cpu-smoke` runs a tiny version on the CPU)")
        return None
    if args.threads:
        torch.set_num_threads(args.threads)
    plan = SMOKE if args.cpu_smoke else FULL
    started = time.perf_counter()
    sets = pair_sets(args.assets, plan)
    rows, training = [], None
    with tempfile.TemporaryDirectory(prefix="gpu-bench-") as tmp:
        tmp = Path(tmp)
        texts = [s for pairs in sets.values() for p in pairs for s in (p.sent_more, p.sent_less)]
        models = {
            "Gemma 3 270M (causal)": random_causal(tmp / "gemma", gemma_folder(args.assets, tmp / "gemma-src"),
                                                   **plan.gemma),
            "bert-base (masked)": random_bert(tmp / "bert", texts, plan.bert_vocab, **plan.bert),
        }
        for label, folder in models.items():
            for dtype in ("float32", "bfloat16"):
                rows += scoring_rows(label, folder, dtype, sets)
        training = attempt(measure_training, models["Gemma 3 270M (causal)"], tmp / "train", plan, args.threads)
        print("training", training, flush=True)
    return render(rows, training, plan, args, time.perf_counter() - started)


def render(rows, training: dict, plan: Plan, args, total: float) -> str:
    import transformers

    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else f"CPU ({platform.machine()})"
    command = "bash bench/gpu.sh" + (" --cpu-smoke" if args.cpu_smoke else "")
    lines = [
        f"`{command}` on {device}, torch {torch.__version__}, transformers {transformers.__version__}"
        f"{', smoke sizes (tiny models, ' + str(plan.pairs) + ' pairs per set)' if args.cpu_smoke else ''}; "
        f"random weights; scoring with the reference method and `--batch-size auto`; "
        f"{total / 60:.1f} min in all.",
        "",
        "| model | dtype | pair set | pairs | pairs/s | s |",
        "|---|---|---|---:|---:|---:|",
    ]
    for label, dtype, name, n, result in rows:
        if "error" in result:
            lines.append(f"| {label} | {dtype} | {name} | {n} | error: {result['error']} | |")
        else:
            lines.append(f"| {label} | {dtype} | {name} | {n} | {result['rate']:.0f} | {result['seconds']:.1f} |")
    lines.append("")
    if "error" in training:
        lines.append(f"Demo training (configs/demo-gemma-lora.yaml): error: {training['error']}")
    else:
        lines.append(f"Demo training (configs/demo-gemma-lora.yaml, random-weight Gemma, {plan.train_steps} steps, "
                     f"batch {training['batch']}, {training['precision']}, checkpoint evaluation off): "
                     f"**{training['rate']:.0f} corpus tokens/s** ({training['tokens']} tokens in "
                     f"{training['seconds']:.1f} s of training; {training['wall']:.1f} s with loading and saving; "
                     "the equalising objective's pair passes come on top and are not counted).")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu-smoke", action="store_true", help="tiny models and sets on the CPU")
    parser.add_argument("--assets", type=Path, default=DEFAULT_ASSETS)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--write", type=Path, default=None,
                        help="write the table into this file's gpu section (default: BENCHMARKS.md "
                             "for a GPU run, nothing for --cpu-smoke)")
    args = parser.parse_args(argv)
    if (torch.cuda.is_available() or args.cpu_smoke) and not (args.assets / "gemma-3-270m").is_dir():
        if not args.cpu_smoke:
            print(f"{args.assets} is missing: run `python bench/gpu_assets.py` where the embedded model "
                  "and ../shared are, and carry the folder here", file=sys.stderr)
            return 2
        prepare(args.assets, wheels=False)
    table = run(args)
    if table is None:
        return 0
    print(table)
    target = args.write or (None if args.cpu_smoke else BENCHMARKS_MD)
    if target is not None:
        write_section("gpu", table, target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
