"""Training throughput on CPU: `queerbias train` against a plain `transformers.Trainer`.

Same model, same data (the demo corpus), the seed study's batch settings (8 x 10
accumulation steps), float32, full fine-tuning. The baseline pads every batch to its
longest document and has no evaluation; ours packs causal documents padding-free. One
more variant adds checkpointed evaluation (held-out perplexity + 200 seeded pairs every
2 steps) to show its overhead, and one trains LoRA under bf16 autocast against fp32.

Models are small random BERT / GPT-2 configurations with tokenizers trained on the corpus
(no download), big enough that the work is in the matrix products, not in overhead.
Tokens/s counts real (non-padding) tokens over the trainer's own runtime.

    python bench/train_speed.py --threads 2 [--steps 4]     # writes its section of BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import tempfile
import time
from pathlib import Path

import torch
from benchmarks_md import write_section

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "corpora" / "demo"
BATCH, ACCUMULATION, MAX_LENGTH = 8, 10, 128


def texts() -> list[str]:
    return [json.loads(line)["text"] for line in (CORPUS / "train.jsonl").read_text().splitlines()]


def build_models(root: Path) -> dict[str, Path]:
    """A 4-layer, 256-wide BERT and GPT-2 with tokenizers trained on the corpus."""
    from tokenizers import BertWordPieceTokenizer, ByteLevelBPETokenizer
    from transformers import (
        BertConfig,
        BertForMaskedLM,
        BertTokenizerFast,
        GPT2Config,
        GPT2LMHeadModel,
        PreTrainedTokenizerFast,
    )

    corpus = texts()
    bert_dir, gpt_dir = root / "bert", root / "gpt2"
    bert_dir.mkdir(parents=True)
    wordpiece = BertWordPieceTokenizer(lowercase=False)
    wordpiece.train_from_iterator(corpus, vocab_size=4000)
    wordpiece.save_model(str(bert_dir))
    bert_tok = BertTokenizerFast(vocab_file=str(bert_dir / "vocab.txt"), do_lower_case=False)
    torch.manual_seed(0)
    BertForMaskedLM(BertConfig(vocab_size=len(bert_tok), hidden_size=256, num_hidden_layers=4,
                               num_attention_heads=4, intermediate_size=1024,
                               max_position_embeddings=512,
                               architectures=["BertForMaskedLM"])).save_pretrained(bert_dir)
    bert_tok.save_pretrained(bert_dir)

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(corpus, vocab_size=4000, special_tokens=["<|endoftext|>"])
    gpt_tok = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<|endoftext|>",
                                      eos_token="<|endoftext|>")
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=len(gpt_tok), n_embd=256, n_layer=4, n_head=4,
                               n_positions=512, bos_token_id=0, eos_token_id=0,
                               architectures=["GPT2LMHeadModel"])).save_pretrained(gpt_dir)
    gpt_tok.save_pretrained(gpt_dir)
    return {"masked": bert_dir, "causal": gpt_dir}


def baseline(model_dir: Path, kind: str, out: Path, steps: int) -> dict:
    """Plain Trainer: no packing, each batch padded to its longest document."""
    from datasets import Dataset
    from transformers import (
        AutoModelForCausalLM,
        AutoModelForMaskedLM,
        AutoTokenizer,
        DataCollatorForLanguageModeling,
        Trainer,
        TrainingArguments,
    )

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = (AutoModelForMaskedLM if kind == "masked" else AutoModelForCausalLM).from_pretrained(model_dir)
    data = Dataset.from_dict({"text": texts()}).map(
        lambda b: tokenizer(b["text"], truncation=True, max_length=MAX_LENGTH), batched=True,
        remove_columns=["text"])
    args = TrainingArguments(output_dir=str(out), max_steps=steps, per_device_train_batch_size=BATCH,
                             gradient_accumulation_steps=ACCUMULATION, learning_rate=2e-5,
                             save_strategy="no", report_to="none", disable_tqdm=True, use_cpu=True,
                             logging_steps=steps, include_num_input_tokens_seen="non_padding",
                             dataloader_pin_memory=False, seed=0)
    collator = DataCollatorForLanguageModeling(tokenizer, mlm=kind == "masked")
    started = time.perf_counter()
    result = Trainer(model=model, args=args, train_dataset=data, data_collator=collator).train()
    return _figures(result.metrics, time.perf_counter() - started)


def ours(model_dir: Path, out: Path, steps: int, evaluate: bool, method: str = "full",
         precision: str = "fp32", threads: int = 2) -> dict:
    from queerbias.train.config import config_from_dict
    from queerbias.train.runner import run_training

    benchmarks = [{"suite": "pairs", "sample": 200}] if evaluate else []
    config = config_from_dict({
        "model": str(model_dir), "output_dir": str(out), "method": method, "max_steps": steps,
        "eval_every": 2 if evaluate else steps, "examples_per_device": BATCH, "grad_accum": ACCUMULATION,
        "learning_rate": 2e-5, "precision": precision, "threads": threads, "logging_steps": steps,
        "data": {"train": str(CORPUS), "max_length": MAX_LENGTH},
        "eval": {"benchmarks": benchmarks, "perplexity": evaluate},
        "compare": {"resamples": 1000},
    })
    started = time.perf_counter()
    run_training(config)
    state = json.loads((out / f"checkpoint-{steps}" / "trainer_state.json").read_text())
    final = next(e for e in reversed(state["log_history"]) if "train_runtime" in e)
    return _figures(final, time.perf_counter() - started)


def _figures(metrics: dict, wall: float) -> dict:
    tokens = metrics["num_input_tokens_seen"]
    return {"tokens": tokens, "train_s": metrics["train_runtime"], "wall_s": wall,
            "tok_s": tokens / metrics["train_runtime"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    root = Path(tempfile.mkdtemp(prefix="train-speed-"))
    try:
        models = build_models(root / "models")
        rows = []
        for kind in ("causal", "masked"):
            base = baseline(models[kind], kind, root / f"base-{kind}", args.steps)
            mine = ours(models[kind], root / f"ours-{kind}", args.steps, False, threads=args.threads)
            evaluated = ours(models[kind], root / f"eval-{kind}", args.steps, True, threads=args.threads)
            lora32 = ours(models[kind], root / f"lora32-{kind}", args.steps, False, "lora", "fp32", args.threads)
            lora16 = ours(models[kind], root / f"lora16-{kind}", args.steps, False, "lora", "bf16", args.threads)
            rows += [
                (kind, "plain Trainer, padded (baseline)", base, base),
                (kind, "queerbias train" + (", packed" if kind == "causal" else ""), mine, base),
                (kind, "  + checkpoint evaluation every 2 steps", evaluated, base),
                (kind, "queerbias train, LoRA fp32", lora32, base),
                (kind, "queerbias train, LoRA bf16 autocast", lora16, lora32),
            ]
        text = render(rows, args)
        write_section("train_speed", text)
        print(text)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def render(rows, args) -> str:
    lines = [
        (f"`python bench/train_speed.py --threads {args.threads} --steps {args.steps}`: "
         f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} torch threads, "
         f"torch {torch.__version__}; batch {BATCH} x {ACCUMULATION} accumulation steps, "
         f"max length {MAX_LENGTH}, {args.steps} optimizer steps, 4-layer 256-wide BERT / GPT-2 "
         "on the demo corpus. Tokens are real (non-padding) tokens; train s is the trainer's "
         "runtime (includes checkpoint evaluation, excludes the step-0 base evaluation); wall s "
         "is the whole call (model load, base evaluation, saves, compare report)."),
        "",
        "| objective | variant | tokens | train s | tok/s | ratio | wall s |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for kind, name, figures, reference in rows:
        ratio = figures["tok_s"] / reference["tok_s"]
        lines.append(f"| {kind} | {name} | {figures['tokens']} | {figures['train_s']:.1f} | "
                     f"{figures['tok_s']:.0f} | {ratio:.2f}x | {figures['wall_s']:.1f} |")
    lines += ["", ("Ratios are against the baseline row of the same objective, except LoRA bf16, "
                   "which is against LoRA fp32. All rows were measured in one run of the script.")]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
