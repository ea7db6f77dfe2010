"""Trainer callbacks: evaluation at every checkpoint, and the progress display.

Evaluation runs in `on_step_end` once the trainer has decided to save (its flow callback
runs first), so the figures are logged into the state the checkpoint then saves. The
completion marker is written in `on_save`, after the trainer wrote everything.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from transformers import TrainerCallback

from queerbias.distributed import process_state
from queerbias.progress import bar
from queerbias.train import checkpoints

#: what a benchmark's entry in a metrics line holds besides its headline's extras
HEADLINE_KEYS = ("suite", "data", "label", "overall", "groups")


class CheckpointEvaluation(TrainerCallback):
    """Scores the model at every save into `checkpoint-N/<benchmark>/`, logs a metrics line."""

    def __init__(self, run_dir: Path, evaluate: Callable[[object, Path, int, dict], dict],
                 base: dict, log: Callable[[dict], None], say: Callable[[str], None]):
        self.run_dir, self.evaluate, self.base, self.log, self.say = run_dir, evaluate, base, log, say
        self.pending: dict | None = None
        self.losses: list[float] = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs:
            self.losses.append(logs["loss"])

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if not control.should_save:
            return
        step = state.global_step
        folder = self.run_dir / f"checkpoint-{step}"
        self.pending = self.evaluate(model, folder, step, {"step": step, "epoch": state.epoch})
        self.log(_flat(self.pending))

    def on_save(self, args, state, control, **kwargs):
        if self.pending is None:
            return
        record, self.pending = self.pending, None
        # the loss of the saving step is logged after on_step_end, before on_save
        record["train_loss"] = sum(self.losses) / len(self.losses) if self.losses else None
        self.losses = []
        folder = self.run_dir / f"checkpoint-{record['step']}"
        if process_state().is_main_process:
            checkpoints.append_metrics(self.run_dir, record)
            checkpoints.mark_complete(folder)
            self.say(summary_line(folder.name, self.base, record))
        process_state().wait_for_everyone()


def _flat(record: dict) -> dict:
    """Scalars for the trainer's log (log_history, and TensorBoard or W&B under `report_to`):
    each benchmark's headline as `bias/<name>`, its per-group figures as `bias/<name>/<group>`,
    the figures of its extras as `<extra>/<name>/<figure>` (pairs: `distance/<name>/bias`)."""
    flat = {}
    for name, bench in record["benchmarks"].items():
        flat[f"bias/{name}"] = bench["overall"]
        flat.update({f"bias/{name}/{group}": value for group, value in bench["groups"].items()
                     if value is not None})
        for extra, figures in extra_figures(bench).items():
            flat.update({f"{extra}/{name}/{key}": value for key, value in figures.items() if value is not None})
    if record.get("perplexity") is not None:
        flat["eval_perplexity"] = record["perplexity"]
    if record.get("general_perplexity") is not None:
        flat["eval_general_perplexity"] = record["general_perplexity"]
    return flat


def extra_figures(bench: dict) -> dict[str, dict[str, float | None]]:
    """A headline's extras that are figures by name (pairs: the distance to indifference, bias and
    soft; counts such as its number of groups are not figures)."""
    extras = {key: value for key, value in bench.items() if key not in HEADLINE_KEYS and isinstance(value, dict)}
    return {key: {k: v for k, v in value.items() if v is None or isinstance(v, float)} for key, value in extras.items()}


def summary_line(label: str, base: dict, now: dict) -> str:
    """`checkpoint-40: bias 57.5 -> 55.0, bias distance 27.9 -> 20.1 (soft 30.1 -> 25.0), perplexity 31.2 -> 29.8`.

    An extra's figure that reads the same in the base and now is left out: the line tells what
    moved, and a setting carried beside the figures (the pair gap's margin) never does."""
    parts = []
    for name, b in now["benchmarks"].items():
        before = base["benchmarks"][name]
        parts.append(f"{name} {_figure(before['overall'])} -> {_figure(b['overall'])}")
        for extra, figures in extra_figures(b).items():
            was = extra_figures(before).get(extra)
            if not figures or was is None:
                continue
            changes = [(key, f"{_figure(was.get(key))} -> {_figure(value)}") for key, value in figures.items()
                       if value is None or was.get(key) != value]
            if not changes:
                continue
            (key, first), *rest = changes
            others = ", ".join(f"{key} {change}" for key, change in rest)
            named = "" if key == next(iter(figures)) else f" {key}"
            parts.append(f"{name} {extra}{named} {first}" + (f" ({others})" if others else ""))
    for key, name in (("perplexity", "perplexity"), ("general_perplexity", "general perplexity")):
        if now.get(key) is not None and base.get(key) is not None:
            parts.append(f"{name} {base[key]:.2f} -> {now[key]:.2f}")
    targeted = f"; targeted groups: {', '.join(now['targeted_groups'])}" if now.get("targeted_groups") else ""
    return f"{label}: " + ", ".join(parts) + f" (base -> now){targeted}"


def _figure(value) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def rate_text(rate: float) -> str:
    """Two significant digits below 10 (a slow CPU run reads 2.4, not 2), whole numbers above."""
    return f"{rate:.2g}" if rate < 10 else f"{rate:.0f}"


class Progress(TrainerCallback):
    """One bar over the optimizer steps: loss, tokens/s and time left (main process only).

    Tokens/s counts the real tokens a step reads over every process (the corpus batch, and the
    pair batch where the objective adds one: `EqualiseTrainer`) and training time only (step
    begin to step end), not checkpoint evaluation.
    """

    def __init__(self):
        self.bar = None
        self.loss = None

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_local_process_zero:
            self.bar = bar(total=state.max_steps, initial=state.global_step, unit="step", desc="training")
            self.train_seconds, self.start_tokens = 0.0, state.num_input_tokens_seen

    def on_step_begin(self, args, state, control, **kwargs):
        self.step_started = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        if self.bar is None:
            return
        self.train_seconds += time.perf_counter() - self.step_started
        tokens = state.num_input_tokens_seen - self.start_tokens  # 0 where a trainer counts none (DPO)
        rate = f"tok/s={rate_text(tokens / max(self.train_seconds, 1e-9))}" if tokens else ""
        loss = "" if self.loss is None else f" loss={self.loss:.4f}"
        self.bar.set_postfix_str(f"{rate}{loss}".strip(), refresh=False)
        self.bar.update(state.global_step - self.bar.n)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs:
            self.loss = logs["loss"]

    def write(self, line: str) -> None:
        (self.bar.write if self.bar is not None else print)(line)

    def on_train_end(self, args, state, control, **kwargs):
        self.close()

    def close(self) -> None:
        """End the bar's line (also when training stops with an error)."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None
