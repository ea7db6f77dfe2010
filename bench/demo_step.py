"""Where a step of the demo goes: the training step of `configs/demo-gemma-lora.yaml`, by part.

Runs the demo's own trainer (the objective the config names, contrast or equalise, on the embedded
Gemma 3 270M, LoRA) in one process for a few optimizer steps,
without checkpoint evaluation, and times each part of the loss as the trainer calls it:
the language-modelling forward, the pair batch's forward (the scorer's rows), the pair terms
(of which the objective's own: the identity anchor or the pairing term), the corpus anchor's
base forward and its KL, and the rest of the step (backward and optimizer). Peak memory is the process's maximum resident set.
One process is what each of the demo's two processes does per step.

    python bench/demo_step.py --threads 1 --steps 4 [--set key=value ...]
    python bench/demo_step.py --threads 1 --steps 3 --rounds 2 --before ../main   # before/after

With `--before DIR` the same measurement runs alternately on the queerbias sources of another
checkout (its `src/`, the state before a change) and on this one, `--rounds` times each, so
that both see the same load; the table gives each part's mean and the ratio after/before.
Absolute seconds move with the machine's load; read the ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import torch
from benchmarks_md import write_section

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "configs" / "demo-gemma-lora.yaml"


class Timers:
    def __init__(self):
        self.seconds = defaultdict(list)

    def wrap(self, owner, name: str, label: str) -> None:
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[label].append(time.perf_counter() - started)

        setattr(owner, name, timed)


def build_trainer(overrides: list[str], run_dir: Path, steps: int):
    from queerbias.train.benchmarks import resolve
    from queerbias.train.config import load_config
    from queerbias.train.corpus import prepare_corpus
    from queerbias.train.data import read_texts
    from queerbias.train.modeling import load_base
    from queerbias.train.objectives.protocol import TrainerSetup
    from queerbias.train.objectives.registry import get_objective
    from queerbias.train.pair_batches import load_training_pairs
    from queerbias.train.trainer import training_arguments

    config = load_config(CONFIG, [f"output_dir={run_dir}", f"max_steps={steps}", f"eval_every={steps + 1}",
                                  "report_to=[]", *overrides])
    objective = get_objective(config.objective)
    config, _ = resolve(config, objective.held_out)
    raw = read_texts(config.data.train, config.data, "train", config.data.max_train_docs)
    pairs = load_training_pairs(config, raw)
    texts, _ = prepare_corpus(config, objective, raw)
    lm = load_base(config)
    setup = TrainerSetup(config=config, settings=objective.settings(config), lm=lm, run_dir=run_dir, texts=texts, pairs=pairs, packing=True,
                         max_length=config.data.max_length,
                         arguments=training_arguments(config, run_dir, True), callbacks=[],
                         process_index=0, num_processes=1)
    return objective.make_trainer(setup), config


def measure(args) -> dict:
    """One measurement in this process: seconds per part (mean over the steps after the first) and
    the peak resident memory."""
    torch.set_num_threads(args.threads)

    from transformers import TrainerCallback

    from queerbias.train.precision import resolve_precision

    timers = Timers()
    steps = []

    class StepClock(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):
            self.started = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            steps.append(time.perf_counter() - self.started)

    with tempfile.TemporaryDirectory() as tmp:
        train, config = build_trainer(args.set, Path(tmp) / "run", args.steps + 1)
        own_term = wrap_parts(timers, type(train), config.objective)
        train.add_callback(StepClock())
        with contextlib.redirect_stderr(None):
            train.train()
    part = {label: statistics.fmean(values[1:]) for label, values in timers.seconds.items()}  # after a warm-up
    step = statistics.fmean(steps[1:])
    return {"language-modelling forward": part["language-modelling forward"],
            "pair batch forward (scorer rows)": part["pair batch forward (scorer rows)"],
            "pair terms": part["pair loss (all)"] - part["pair batch forward (scorer rows)"],
            f"  of which the {own_term}": part.get(own_term, 0.0),
            "corpus anchor: base forward": part.get("corpus anchor: base forward", 0.0),
            "corpus anchor: KL": part.get("corpus anchor: KL", 0.0),
            "forward, all parts": part["forward (all)"],
            "backward, optimizer, rest": step - part["forward (all)"],
            "step": step,
            "peak resident memory (GB)": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2,
            "precision": resolve_precision(config.precision)}


def wrap_parts(timers: Timers, trainer_class: type, objective: str) -> str:
    """Time the parts of the demo's objective (equalise or contrast) as its trainer calls them; returns the name
    of the pair loss's own term (equalise: the pairing term; contrast: the identity anchor, whose base forward
    it includes)."""
    from transformers import Trainer

    if objective not in ("equalise", "contrast"):
        sys.exit(f"bench/demo_step.py splits the equalise and contrast objectives, not {objective!r}")
    timers.wrap(Trainer, "compute_loss", "language-modelling forward")  # the corpus batch (the objective's super())
    timers.wrap(trainer_class, "compute_loss", "forward (all)")
    if objective == "contrast":
        from queerbias.train.objectives.contrast import loss, trainer
        timers.wrap(trainer, "contrast_loss", "pair loss (all)")
        own = "identity anchor"
        timers.wrap(loss, "identity_anchor", own)
    else:
        from queerbias.train.objectives.equalise import loss, trainer
        timers.wrap(trainer, "pair_loss", "pair loss (all)")
        own = "pairing term"
        timers.wrap(loss, "pairing_loss", own)
    timers.wrap(loss, "batch_tensors", "pair batch forward (scorer rows)")
    timers.wrap(trainer, "base_logits", "corpus anchor: base forward")
    timers.wrap(trainer, "anchor_loss", "corpus anchor: KL")
    return own


def compare(args) -> None:
    """Before (another checkout's sources) and after (these), alternately, `rounds` times each."""
    before_src = (Path(args.before) / "src").resolve()
    runs = {"before": [], "after": []}
    for _ in range(args.rounds):
        for name, source in (("before", before_src), ("after", REPO / "src")):
            command = [sys.executable, __file__, "--threads", str(args.threads), "--steps", str(args.steps),
                       "--json", *(f"--set={item}" for item in args.set)]
            env = {**os.environ, "PYTHONPATH": str(source)}
            output = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
            runs[name].append(json.loads(output.strip().splitlines()[-1]))
    lines = [f"`python bench/demo_step.py --threads {args.threads} --steps {args.steps} --rounds {args.rounds} "
             f"--before {args.before}`: {platform.machine()}, torch {torch.__version__}, precision "
             f"{runs['after'][0]['precision']} by `precision: auto` (this CPU: {cpu_bf16()}); one process of the "
             f"demo, {args.steps} steps after a warm-up, {args.rounds} alternating rounds each, torch threads "
             f"{args.threads}.", "", "| part | before s | after s | after / before |", "|---|---:|---:|---:|"]
    for label in runs["before"][0]:
        if label == "precision":
            continue
        before = statistics.fmean(r[label] for r in runs["before"])
        after = statistics.fmean(r[label] for r in runs["after"])
        ratio = f"{after / before:.2f}x" if before else ""
        lines.append(f"| {label.strip()} | {before:.2f} | {after:.2f} | {ratio} |")
    print("\n".join(lines))
    if args.write:
        write_section("demo_step", "\n".join(lines))


def cpu_bf16() -> str:
    from queerbias.train.precision import cpu_has_bf16

    return "bf16 instructions" if cpu_has_bf16() else "no bf16 instructions"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=4, help="optimizer steps timed after one warm-up step")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override")
    parser.add_argument("--before", metavar="DIR", help="another checkout: measure its sources and these, alternately")
    parser.add_argument("--rounds", type=int, default=1, help="with --before: alternating rounds")
    parser.add_argument("--write", action="store_true", help="with --before: write the table into BENCHMARKS.md")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.before:
        compare(args)
        return
    result = measure(args)
    if args.json:
        print(json.dumps(result))
        return
    print(f"demo step, {args.steps} steps after a warm-up, torch threads {args.threads}, precision "
          f"{result.pop('precision')}, overrides {args.set or 'none'}:")
    for label, seconds in result.items():
        print(f"  {label:38s} {seconds:7.2f}" + (f" s  {100 * seconds / result['step']:5.1f}%" if "GB" not in label
                                                  else ""))


if __name__ == "__main__":
    main()
