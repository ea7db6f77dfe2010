"""The `Trainer` of the objectives that add a loss on seeded pair batches to the corpus batch (equalise, contrast).

What both need around their own loss: which draw a micro-batch is (step, micro-batch, process: the key of
a seeded batch, so a resumed run draws what an uninterrupted one would), the division by the accumulation
steps that the trainer skips when the model normalises its loss by `num_items_in_batch`, the pair batch's
tokens counted as input, and each extra term's mean in the logs.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from transformers import Trainer

from queerbias.pairs.schema import Pair
from queerbias.scoring.scorer import Scorer


class PairTrainer(Trainer):
    def __init__(self, *args, scorer: Scorer, process_index: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.scorer, self.process_index = scorer, process_index
        self._micro = (-1, 0)  # (optimizer step, micro-batches drawn in it)
        self._terms: dict[str, list[torch.Tensor]] = {}  # detached; read when logged (no sync per step)

    def draw_key(self) -> tuple[int, int, int]:
        """(step, micro-batch, process) of the micro-batch being computed; call once per `compute_loss`."""
        step = self.state.global_step
        micro = self._micro[1] if self._micro[0] == step else 0
        self._micro = (step, micro + 1)
        return step, micro, self.process_index

    def per_batch(self, loss: torch.Tensor, num_items_in_batch) -> torch.Tensor:
        """A per-batch mean as the trainer adds it to a language-modelling loss: the LM loss may already be
        normalised over the accumulated batch (num_items_in_batch), and then a mean needs the division by the
        accumulation steps that the trainer skips."""
        scaled = self.loss_is_scaled_for_ga
        if scaled is None:
            scaled = (self.model_accepts_loss_kwargs and num_items_in_batch is not None) or \
                self.compute_loss_func is not None
        return loss / self.current_gradient_accumulation_steps if scaled else loss

    def remember(self, name: str, value: torch.Tensor) -> None:
        """A term to log (its mean since the last log) as `name`."""
        self._terms.setdefault(name, []).append(value.detach())

    def count_tokens(self, pairs: Iterable[Pair]) -> None:
        """The pair batch's real tokens (each distinct sentence once, every process) join the trainer's count
        of input tokens, so that tokens/s counts what a step reads, not the corpus batch alone."""
        if self.args.include_num_input_tokens_seen in (False, "no"):
            return
        sentences = {text for pair in pairs for text in (pair.sent_more, pair.sent_less)}
        local = torch.tensor([sum(len(self.scorer.encode(text).ids) for text in sentences)],
                             device=self.accelerator.device)
        self.state.num_input_tokens_seen += int(self.accelerator.gather(local).sum())

    def log(self, logs: dict, *args, **kwargs) -> None:
        if "loss" in logs:
            for name, values in self._terms.items():
                if values:
                    logs[name] = round(torch.stack(values).float().mean().item(), 6)
            self._terms = {}
        super().log(logs, *args, **kwargs)
