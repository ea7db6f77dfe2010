"""The model card of a training run: `RUN/final/README.md` in the Hugging Face Hub's format.

Every figure on the card comes from the run folder: `config.yaml` (method, data,
hyperparameters, and the `record` a mitigation run adds to it), `metrics.jsonl`
(perplexity of the base model and of the last checkpoint) and
`compare/<benchmark>/delta.json` (every before/after figure with its interval and
test). A run that did not get as far as its compare report gets a card that says which
evaluation is missing; no number stands in for one that was not measured.

The front matter is built with huggingface_hub's `ModelCardData` and `EvalResult`:
`model-index` holds, per benchmark, what its suite reports (pairs: the bias score, the
soft score and the distance to indifference of both) of the base model and after
fine-tuning, exactly as delta.json has them. The card is parsed back with `ModelCard` before it is written,
so a card whose metadata the Hub could not read is never written. (`ModelCard.validate`
asks the Hub and needs the network; it is not called.)
"""

from __future__ import annotations

from pathlib import Path

from huggingface_hub import ModelCard

from queerbias.errors import QueerbiasError
from queerbias.fileio import atomic_write
from queerbias.train.card.body import card_body
from queerbias.train.card.metadata import card_data
from queerbias.train.card.run import CONFIG_FILE, TrainingRun, base_model, read_run

__all__ = ["CARD_FILE", "CONFIG_FILE", "base_model", "read_run", "render_card", "write_card"]

CARD_FILE = "README.md"


def render_card(run: TrainingRun, card_path: Path) -> str:
    """The card's text (front matter and body), parsed back with `ModelCard` to prove it reads."""
    data = card_data(run)
    text = f"---\n{data.to_yaml()}\n---\n\n{card_body(run, card_path.parent)}"
    parsed = ModelCard(text)
    if parsed.data.to_dict() != data.to_dict():
        raise QueerbiasError(f"{card_path}: the card's metadata does not read back as written; not written")
    return text


def write_card(run_dir: str | Path, out: str | Path | None = None) -> tuple[Path, list[str]]:
    """Write the card (default `RUN/final/README.md`) atomically; returns its path and what is incomplete."""
    run = read_run(run_dir)
    path = Path(out) if out is not None else run.path / "final" / CARD_FILE
    atomic_write(path, render_card(run, path))
    return path, run.incomplete()
