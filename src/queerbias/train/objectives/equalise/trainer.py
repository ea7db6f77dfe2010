"""`equalise`: transformers' `Trainer` whose loss adds the weighted pair loss (`loss.pair_loss`).

The pair loss is computed by the scorer over the model being trained (its adapter active)
on a seeded, group-balanced batch of training pairs per micro-batch (`train.pair_batches.PairBatches`),
so a resumed run draws the batches an uninterrupted one would. With `anchor_term`, the
language-modelling batch's logits are also compared with the base's (`equalise.anchor`).
"""

from __future__ import annotations

from queerbias.train.objectives.equalise.anchor import anchor_loss, base_logits
from queerbias.train.objectives.equalise.config import EqualiseConfig
from queerbias.train.objectives.equalise.loss import pair_loss, training_scorer
from queerbias.train.objectives.protocol import TrainerSetup
from queerbias.train.pair_batches import PairBatches
from queerbias.train.pair_trainer import PairTrainer
from queerbias.train.trainer import language_model_trainer


def make_trainer(setup: TrainerSetup[EqualiseConfig]):
    config, lm, settings = setup.config, setup.lm, setup.settings
    batches = PairBatches(setup.pairs.pairs, settings.pairs_per_batch, settings.balance, config.seed,
                          settings.groups_per_batch, config.grad_accum, setup.num_processes)
    return language_model_trainer(setup, EqualiseTrainer, lambda model: {
        "scorer": training_scorer(model, lm.tokenizer, lm.kind), "batches": batches,
        "settings": setup.settings, "process_index": setup.process_index})


class EqualiseTrainer(PairTrainer):
    """`Trainer` whose loss adds the weighted pair loss of a seeded, balanced pair batch."""

    def __init__(self, *args, batches: PairBatches, settings: EqualiseConfig, **kwargs):
        super().__init__(*args, **kwargs)
        self.batches, self.settings = batches, settings

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        anchored = bool(self.settings.anchor_term)
        result = super().compute_loss(model, inputs, return_outputs or anchored, num_items_in_batch)
        lm_loss = result[0] if return_outputs or anchored else result
        pairs = self.batches.draw(*self.draw_key())
        self.count_tokens(pairs)
        with self.accelerator.autocast():
            loss = pair_loss(self.scorer, pairs, self.settings,
                             lambda: self.accelerator.unwrap_model(model).disable_adapter())
        self.remember("pair_loss", loss)
        total = self.settings.lm_term * lm_loss + self.settings.weight * self.per_batch(loss, num_items_in_batch)
        if anchored:
            with self.accelerator.autocast():
                base = base_logits(self.accelerator.unwrap_model(model), inputs)
            anchor = anchor_loss(result[1].logits, base, inputs.get("attention_mask"), self.settings.anchor_top_k)
            self.remember("anchor_loss", anchor)
            total = total + self.settings.anchor_term * self.per_batch(anchor, num_items_in_batch)
        return (total, result[1]) if return_outputs else total
