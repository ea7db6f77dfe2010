"""`contrast`: transformers' `Trainer` whose loss adds the contrast terms and the identity-invariance anchor
(`loss.contrast_loss`) on a seeded batch of cells (`batches.CellBatches`), and, on the corpus batch,
language modelling and the base anchor of `equalise` (`equalise.anchor`)."""

from __future__ import annotations

from queerbias.train.objectives.contrast.batches import CellBatches
from queerbias.train.objectives.contrast.config import ContrastConfig
from queerbias.train.objectives.contrast.loss import contrast_loss
from queerbias.train.objectives.equalise.anchor import anchor_loss, base_logits
from queerbias.train.objectives.equalise.loss import training_scorer
from queerbias.train.objectives.protocol import TrainerSetup
from queerbias.train.pair_trainer import PairTrainer
from queerbias.train.trainer import language_model_trainer


def make_trainer(setup: TrainerSetup[ContrastConfig]):
    config, lm, settings = setup.config, setup.lm, setup.settings
    batches = CellBatches(setup.pairs.pairs, settings.cells, settings.stereotypes_per_cell, settings.neutral_per_cell,
                          settings.mined_per_batch, config.seed, config.grad_accum, setup.num_processes,
                          settings.cells_per_group)
    return language_model_trainer(setup, ContrastTrainer, lambda model: {
        "scorer": training_scorer(model, lm.tokenizer, lm.kind), "batches": batches, "settings": settings,
        "process_index": setup.process_index})


class ContrastTrainer(PairTrainer):
    """`Trainer` whose loss adds the weighted contrast terms and anchors of a seeded batch of cells."""

    def __init__(self, *args, batches: CellBatches, settings: ContrastConfig, **kwargs):
        super().__init__(*args, **kwargs)
        self.batches, self.settings = batches, settings

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        settings = self.settings
        corpus_anchored = bool(settings.corpus_anchor_term)
        result = super().compute_loss(model, inputs, return_outputs or corpus_anchored, num_items_in_batch)
        lm_loss = result[0] if return_outputs or corpus_anchored else result
        batch = self.batches.draw(*self.draw_key())
        self.count_tokens(batch.pairs)
        unwrapped = self.accelerator.unwrap_model(model)
        with self.accelerator.autocast():
            contrast, anchor = contrast_loss(self.scorer, batch, settings, unwrapped.disable_adapter)
        self.remember("contrast_loss", contrast)
        self.remember("identity_anchor", anchor)
        total = settings.lm_term * lm_loss + self.per_batch(settings.weight * contrast
                                                            + settings.anchor_term * anchor, num_items_in_batch)
        if corpus_anchored:
            with self.accelerator.autocast():
                base = base_logits(unwrapped, inputs)
            corpus = anchor_loss(result[1].logits, base, inputs.get("attention_mask"), settings.anchor_top_k)
            self.remember("corpus_anchor", corpus)
            total = total + settings.corpus_anchor_term * self.per_batch(corpus, num_items_in_batch)
        return (total, result[1]) if return_outputs else total
