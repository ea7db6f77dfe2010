"""`equalise`: transformers' `Trainer` whose loss adds the weighted pair loss (`loss.pair_loss`).

The pair loss is computed by the scorer over the model being trained (its adapter active)
on a seeded, group-balanced batch of training pairs per micro-batch (`train.pairs.PairBatches`),
so a resumed run draws the batches an uninterrupted one would. With `anchor_term`, the
language-modelling batch's logits are also compared with the base's (`equalise.anchor`).
"""

from __future__ import annotations

import torch
from transformers import Trainer

from queerbias.scoring.scorer import Scorer
from queerbias.train.objectives.equalise.anchor import anchor_loss, base_logits
from queerbias.train.objectives.equalise.config import EqualiseConfig
from queerbias.train.objectives.equalise.loss import pair_loss, training_scorer
from queerbias.train.objectives.protocol import TrainerSetup
from queerbias.train.pairs import PairBatches
from queerbias.train.trainer import language_model_trainer


def make_trainer(setup: TrainerSetup[EqualiseConfig]):
    config, lm = setup.config, setup.lm
    batches = PairBatches(setup.pairs.pairs, config.pairs.batch_size, config.pairs.balance, config.seed,
                          config.pairs.groups_per_batch, config.grad_accum, setup.num_processes)
    return language_model_trainer(setup, EqualiseTrainer, lambda model: {
        "scorer": training_scorer(model, lm.tokenizer, lm.kind), "batches": batches,
        "settings": setup.settings, "process_index": setup.process_index})


class EqualiseTrainer(Trainer):
    """`Trainer` whose loss adds the weighted pair loss of a seeded, balanced pair batch."""

    def __init__(self, *args, scorer: Scorer, batches: PairBatches, settings: EqualiseConfig, process_index: int,
                 **kwargs):
        super().__init__(*args, **kwargs)
        self.scorer, self.batches, self.settings = scorer, batches, settings
        self.process_index = process_index
        self._micro = (-1, 0)  # (optimizer step, micro-batches drawn in it)
        self._pair_losses: list[torch.Tensor] = []  # detached; read when logged (no sync per step)
        self._anchor_losses: list[torch.Tensor] = []

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        anchored = bool(self.settings.anchor_term)
        result = super().compute_loss(model, inputs, return_outputs or anchored, num_items_in_batch)
        lm_loss = result[0] if return_outputs or anchored else result
        step = self.state.global_step
        micro = self._micro[1] if self._micro[0] == step else 0
        self._micro = (step, micro + 1)
        pairs = self.batches.draw(step, micro, self.process_index)
        self._count_tokens(pairs)
        with self.accelerator.autocast():
            loss = pair_loss(self.scorer, pairs, self.settings,
                             lambda: self.accelerator.unwrap_model(model).disable_adapter())
        self._pair_losses.append(loss.detach())
        # The LM loss may already be normalised over the accumulated batch (num_items_in_batch);
        # the pair loss is a per-batch mean, so it then needs the division the trainer skips.
        scaled = self.loss_is_scaled_for_ga
        if scaled is None:
            scaled = (self.model_accepts_loss_kwargs and num_items_in_batch is not None) or \
                self.compute_loss_func is not None
        if scaled:
            loss = loss / self.current_gradient_accumulation_steps
        total = self.settings.lm_term * lm_loss + self.settings.weight * loss
        if anchored:
            with self.accelerator.autocast():
                base = base_logits(self.accelerator.unwrap_model(model), inputs)
            anchor = anchor_loss(result[1].logits, base, inputs.get("attention_mask"), self.settings.anchor_top_k)
            self._anchor_losses.append(anchor.detach())
            total = total + self.settings.anchor_term * (
                anchor / self.current_gradient_accumulation_steps if scaled else anchor)
        return (total, result[1]) if return_outputs else total

    def _count_tokens(self, pairs) -> None:
        """The pair batch's real tokens (each distinct sentence once, every process) join the trainer's
        count of input tokens, so that tokens/s counts what a step reads, not the corpus batch alone."""
        if self.args.include_num_input_tokens_seen in (False, "no"):
            return
        sentences = {text for pair in pairs for text in (pair.sent_more, pair.sent_less)}
        local = torch.tensor([sum(len(self.scorer.encode(text).ids) for text in sentences)],
                             device=self.accelerator.device)
        self.state.num_input_tokens_seen += int(self.accelerator.gather(local).sum())

    def log(self, logs: dict, *args, **kwargs) -> None:
        if "loss" in logs and self._pair_losses:
            logs["pair_loss"] = round(torch.stack(self._pair_losses).float().mean().item(), 6)
            self._pair_losses = []
        if "loss" in logs and self._anchor_losses:
            logs["anchor_loss"] = round(torch.stack(self._anchor_losses).float().mean().item(), 6)
            self._anchor_losses = []
        super().log(logs, *args, **kwargs)
