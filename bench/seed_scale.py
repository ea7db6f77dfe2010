"""The seed study at the paper's scale: cells, steps, device hours and disk, from a measured micro-benchmark.

    python bench/seed_scale.py [--device cpu|cuda] [--threads N] [--sample 24] [--write]

The study is configs/study-seed.yaml: 8 models × 1 run × 3 seeds, each cell full fine-tuning for 3
epochs on the Mastodon + taz corpus (4.9 million words, Morch & Braun Sec. 3.4) at batch 8 (BLOOM: 4)
× 10 accumulation steps and 512 tokens, a checkpoint every 500 steps, every checkpoint and the shared
base scored on WinoQueer-DE (45,540 pairs) and the survey set (387).

What is measured, here, per model: each of the eight architectures built at its published size with
random weights (speed does not depend on the weights; the Hub is not reachable from the benchmark
machines), then
- scoring: seconds per scored (sentence, position) request of the real scorer (`run_to_dir`, the
  reference method) on a sample of the synthetic 45,540-pair WinoQueer-DE-shaped set (bench/gpu_bench:
  WinoQueer v0 behind German adverbs), and the requests the whole set needs (the scorer computes each
  distinct one once), so that seconds per pair = requests per pair × seconds per request;
- training: seconds of one forward and backward pass over a 512-token sequence;
- the bytes a scored run writes per pair (pairs.csv, summary).
Token counts come from a stand-in tokenizer, Gemma 3's (262k entries, multilingual), as the eight
models' own are not on the machine: the requests per pair, and tokens per corpus word on the shipped
German demo corpus. The scoring models take Gemma's vocabulary so its ids are valid; their LM head,
run only at the positions read, is then that of a 262k vocabulary (an overestimate for gpt2, opt and
the BERTs, whose vocabularies are 30k-120k).

The formula (per model m; S = 3 seeds, P = 45,927 pairs, L = 512, e = 500 steps between checkpoints):

    sequences_m  = ceil(words × τ / (L − 2))                      (τ: tokens per word)
    steps_m      = 3 epochs × ceil(sequences_m / (batch_m × 10))
    evals_m      = 1 shared base + S × ceil(steps_m / e)           (a checkpoint every e steps and at the end)
    scoring_h    = evals_m × P × requests per pair × s per request / 3600
    training_h   = S × steps_m × batch_m × 10 × s per sequence / 3600
    disk_m       = S × (ceil(steps_m / e) × 16 + 4) bytes × params_m   (a checkpoint: float32 weights and
                   AdamW's two moments; final/: the weights)  + evals_m × P × bytes per pair

Device hours on a GPU are `--device cuda` measured (bench/gpu.sh runs this when a GPU is lent). On a
CPU the script also gives an estimate for one GPU: the CPU hours × (the CPU's measured FLOP/s on the
training pass, 6 × params × 512 / seconds) / an assumed effective GPU throughput (`--gpu-tflops`,
default 25: an RTX 4090's 82.6 TFLOP/s float32 peak at about 30%). That estimate is no measurement
and is marked so until a GPU measures it. Writes the table into docs/study.md (`--write`).
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import tempfile
import time
from pathlib import Path

import torch

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from benchmarks_md import markdown_table, write_section  # noqa: E402
from gpu_assets import DEFAULT_ASSETS, GEMMA, gemma_folder, v0_file  # noqa: E402
from gpu_bench import SYNTHETIC_PAIRS, synthetic_set  # noqa: E402

STUDY_MD = REPO / "docs" / "study.md"
SEEDS, EPOCHS, ACCUMULATION, LENGTH, EVERY = 3, 3, 10, 512, 500
WORDS = 4_900_000  # the corpus, Morch & Braun Sec. 3.4
SURVEY_PAIRS = 387
#: the eight models at their published sizes (their config.json on the Hub): (config class, fields, kind, batch)
MODELS = {
    "bloom-560m": ("BloomConfig", dict(vocab_size=250880, hidden_size=1024, n_layer=24, n_head=16), "causal", 4),
    "german_bert": ("BertConfig", dict(vocab_size=30000), "masked", 8),
    "gpt2": ("GPT2Config", dict(vocab_size=50257), "causal", 8),
    "multi_bert": ("BertConfig", dict(vocab_size=119547), "masked", 8),
    "opt-350m": ("OPTConfig", dict(vocab_size=50272, hidden_size=1024, num_hidden_layers=24, ffn_dim=4096,
                                   num_attention_heads=16, word_embed_proj_dim=512, max_position_embeddings=2048,
                                   do_layer_norm_before=False), "causal", 8),
    "xlm-clm": ("XLMConfig", dict(vocab_size=64699, emb_dim=1024, n_layers=6, n_heads=8, n_langs=2, use_lang_emb=True,
                                  causal=True, lang2id={"de": 0, "en": 1}, max_position_embeddings=512), "causal", 8),
    "xlm-mlm": ("XLMConfig", dict(vocab_size=64699, emb_dim=1024, n_layers=6, n_heads=8, n_langs=2, use_lang_emb=True,
                                  causal=False, lang2id={"de": 0, "en": 1}, max_position_embeddings=512), "masked", 8),
    "xlm-roberta": ("XLMRobertaConfig", dict(vocab_size=250002, max_position_embeddings=514, type_vocab_size=1,
                                             pad_token_id=1, bos_token_id=0, eos_token_id=2), "masked", 8),
}


def build(name: str, vocab: int | None = None) -> torch.nn.Module:
    """The architecture of `name` at its published size, random weights (a `vocab` replaces its vocabulary)."""
    import transformers

    kind_class, fields, kind, _ = MODELS[name]
    config = getattr(transformers, kind_class)(**{**fields, **({"vocab_size": vocab} if vocab else {})})
    auto = transformers.AutoModelForCausalLM if kind == "causal" else transformers.AutoModelForMaskedLM
    torch.manual_seed(0)
    return auto.from_config(config, dtype=torch.float32)


def stand_in_tokenizer(assets: Path, into: Path):
    """Gemma 3's tokenizer, with a mask token for the masked scorer: from the GPU assets where they are
    (a GPU machine has no embedded model; `python bench/gpu_assets.py`), else the embedded model's."""
    from transformers import AutoTokenizer

    from queerbias.models.loading import inspect_model

    tokenizer = AutoTokenizer.from_pretrained(gemma_folder(assets, into)) if (assets / GEMMA).is_dir() \
        else inspect_model("embedded:gemma-3-270m").tokenizer
    tokenizer.add_special_tokens({"mask_token": "<queerbias-mask>"})
    return tokenizer


def requests_per_pair(lm, pairs) -> float:
    """Distinct (sentence, position) requests the scorer computes for `pairs`, per pair (tokenizer only)."""
    from queerbias.scoring.config import ScoringConfig
    from queerbias.scoring.scorer import make_scorer
    from queerbias.suites.pairs.scoring import pair_requests

    return len(pair_requests(make_scorer(lm, ScoringConfig()), pairs)[1]) / len(pairs)


def measure(name: str, tokenizer, sample, everything, device, requests: dict) -> dict:
    """Seconds per scored request and per training sequence, requests per pair and bytes per pair;
    `requests`: requests per pair of the whole set by kind (the tokenizer's work only), filled once a kind."""
    from queerbias.models import LoadedModel
    from queerbias.models.languages import bind_language
    from queerbias.pairs.schema import PairSet
    from queerbias.suites.pairs.suite import PairsSuite
    from queerbias.suites.store import run_to_dir

    kind = MODELS[name][2]
    model = build(name, vocab=len(tokenizer)).to(device).eval()
    if name.startswith("xlm-") and name != "xlm-roberta":
        bind_language(model, "de")
    lm = LoadedModel(spec=name, model=model, tokenizer=tokenizer, kind=kind, fingerprint=f"random:{name}")
    if kind not in requests:
        requests[kind] = requests_per_pair(lm, everything)
    found = {"requests_per_pair": requests[kind], "kind": kind}
    with tempfile.TemporaryDirectory(prefix="seed-scale-") as tmp:
        run_to_dir(PairsSuite(), lm, PairSet("warm-up", sample[:4]), Path(tmp) / "warm-up", progress=False)
        summary = run_to_dir(PairsSuite(), lm, PairSet("sample", sample), Path(tmp) / "run", progress=False)
        found["bytes_per_pair"] = sum(p.stat().st_size for p in (Path(tmp) / "run").iterdir()) / len(sample)
    found["s_per_request"] = summary["meta"]["timings"]["evaluate_s"] / (requests_per_pair(lm, sample) * len(sample))
    del lm, model
    model = build(name).to(device).train()
    found["params"] = sum(p.numel() for p in model.parameters())
    ids = torch.randint(5, MODELS[name][1]["vocab_size"], (1, LENGTH), device=device)
    model(input_ids=ids[:, :64], labels=ids[:, :64]).loss.backward()  # warm-up
    _sync(device)
    started = time.perf_counter()
    model(input_ids=ids, labels=ids).loss.backward()
    _sync(device)
    found["s_per_sequence"] = time.perf_counter() - started
    return found


def _sync(device) -> None:
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def estimate(name: str, found: dict, tau: float, gpu_tflops: float | None) -> dict:
    """The formula of the module docstring for one model."""
    batch = MODELS[name][3]
    sequences = math.ceil(WORDS * tau / (LENGTH - 2))
    steps = EPOCHS * math.ceil(sequences / (batch * ACCUMULATION))
    checkpoints = math.ceil(steps / EVERY)
    pairs = SYNTHETIC_PAIRS + SURVEY_PAIRS
    evaluations = 1 + SEEDS * checkpoints
    scoring = evaluations * pairs * found["requests_per_pair"] * found["s_per_request"] / 3600
    training = SEEDS * steps * batch * ACCUMULATION * found["s_per_sequence"] / 3600
    disk = SEEDS * (checkpoints * 16 + 4) * found["params"] + evaluations * pairs * found["bytes_per_pair"]
    speedup = None
    if gpu_tflops:
        measured = 6 * found["params"] * LENGTH / found["s_per_sequence"]  # FLOP/s of the training pass here
        speedup = gpu_tflops * 1e12 / measured
    return {"steps": steps, "evaluations": evaluations, "scoring_h": scoring, "training_h": training, "disk": disk,
            "speedup": speedup}


def table(results: dict[str, dict], estimates: dict[str, dict], tau: float, device: str, gpu_tflops: float | None,
          sample: int) -> str:
    hours = "GPU hours" if device.startswith("cuda") else "CPU hours (measured here)"
    header = ["model", "params", "requests/pair", "ms/request", "s/sequence (512)", "steps/cell", "evaluations",
              f"{hours}: scoring", f"{hours}: training"]
    if gpu_tflops:
        header.append(f"GPU hours, ESTIMATE ({gpu_tflops:g} TFLOP/s)")
    header.append("disk (GB)")
    rows, total = [], {"scoring": 0.0, "training": 0.0, "gpu": 0.0, "disk": 0.0, "steps": 0}
    for name, found in results.items():
        e = estimates[name]
        row = [name, f"{found['params'] / 1e6:.0f}M", f"{found['requests_per_pair']:.1f}",
               f"{1000 * found['s_per_request']:.2f}", f"{found['s_per_sequence']:.2f}", str(e["steps"]),
               str(e["evaluations"]), f"{e['scoring_h']:,.1f}", f"{e['training_h']:,.1f}"]
        if gpu_tflops:
            gpu = (e["scoring_h"] + e["training_h"]) / e["speedup"]
            total["gpu"] += gpu
            row.append(f"{gpu:,.1f}")
        row.append(f"{e['disk'] / 1e9:,.0f}")
        rows.append(row)
        total["scoring"] += e["scoring_h"]
        total["training"] += e["training_h"]
        total["disk"] += e["disk"]
        total["steps"] += SEEDS * e["steps"]
    rows.append(["all 8 models, 24 cells", "", "", "", "", f"{total['steps']:,} in all", "",
                 f"{total['scoring']:,.0f}", f"{total['training']:,.0f}",
                 *([f"{total['gpu']:,.0f}"] if gpu_tflops else []), f"{total['disk'] / 1e9:,.0f}"])
    where = torch.cuda.get_device_name(0) if device.startswith("cuda") else \
        f"CPU ({platform.machine()}, {torch.get_num_threads()} threads, torch {torch.__version__})"
    lines = [f"`python bench/seed_scale.py --device {device} --sample {sample}`: {where}; random weights at the "
             f"published sizes; tokens per word {tau:.2f} (Gemma 3's tokenizer on the demo corpus).", ""]
    lines += markdown_table(header, [False] + [True] * (len(header) - 1), rows)
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--threads", type=int, default=None, help="torch threads (CPU)")
    parser.add_argument("--sample", type=int, default=24, help="pairs scored per model for the timing")
    parser.add_argument("--gpu-tflops", type=float, default=25.0,
                        help="assumed effective float32 TFLOP/s of one GPU, for the CPU run's estimate")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated subset (default: all eight)")
    parser.add_argument("--assets", type=Path, default=DEFAULT_ASSETS, help="bench/gpu_assets.py's folder")
    parser.add_argument("--write", action="store_true", help="write the table into docs/study.md")
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        print("no GPU: torch sees no CUDA device here, so nothing was measured")
        return 0
    if args.threads:
        torch.set_num_threads(args.threads)
    from queerbias.pairs.io import read_pairs
    from queerbias.train.config import DataSettings
    from queerbias.train.data import read_texts

    v0 = v0_file(args.assets)
    if v0 is None:
        print("no WinoQueer v0 file: run `python bench/gpu_assets.py` where ../shared/data is")
        return 2
    tokenizer = stand_in_tokenizer(args.assets, Path(tempfile.mkdtemp(prefix="seed-scale-gemma-")))
    texts = read_texts(str(REPO / "corpora" / "demo"), DataSettings(train=str(REPO / "corpora" / "demo")), "train",
                       None)
    tau = sum(len(tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts) / sum(len(t.split())
                                                                                             for t in texts)
    everything = synthetic_set(read_pairs(v0, identical="keep").pairs, SYNTHETIC_PAIRS)
    sample = everything[::len(everything) // args.sample][:args.sample]
    results, estimates, requests = {}, {}, {}
    gpu = None if args.device == "cuda" else args.gpu_tflops
    for name in args.models.split(","):
        results[name] = measure(name, tokenizer, sample, everything, args.device, requests)
        estimates[name] = estimate(name, results[name], tau, gpu)
        print(name, results[name], estimates[name], flush=True)
    body = table(results, estimates, tau, args.device, gpu, args.sample)
    print(body)
    if args.write:
        write_section(f"seed-scale-{args.device}", body, STUDY_MD)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
