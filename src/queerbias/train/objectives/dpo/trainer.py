"""`dpo`: preference tuning with TRL's `DPOTrainer` on stereotype frames (causal LMs).

The preference data follows BiasDPO (Allam 2024): the prompt is a stereotype frame up to
the identity phrase ("Ich finde, trans Frauen"), the rejected continuation the stereotype
(" sind nur in einer Phase."), the chosen one a refutation of its category (" kennen die
eigene Identität genau."). Triples come only from the training pairs, which must be
queerbias-de or one of its splits, since the frames are needed to cut a sentence into
prompt and continuation (`pairs.queerbias_de.preference_triples`).

LoRA by default (TRL builds the adapter from our LoraConfig; the reference model is the
base with the adapter disabled), the same callbacks as every run (checkpoint evaluation,
progress) and the trainer's own resume.
"""

from __future__ import annotations

from datasets import Dataset
from trl import DPOConfig, DPOTrainer

from queerbias.errors import QueerbiasError
from queerbias.pairs.queerbias_de import preference_triples
from queerbias.train.modeling import lora_config
from queerbias.train.objectives.dpo.config import DpoConfig
from queerbias.train.objectives.protocol import TrainerSetup


def preference_dataset(pairs):
    """A `datasets.Dataset` of prompt/chosen/rejected for these queerbias-de pairs."""
    if not all(p.pair_id.startswith("qde-") for p in pairs.pairs):
        raise QueerbiasError(f"config key 'pairs.train': dpo builds its preference data from the "
                             f"queerbias-de templates, and {pairs.name} is not queerbias-de or a split of it; set "
                             "pairs.train to a side of queerbias-de (e.g. queerbias-de:train?by=frame+template, "
                             "judged on queerbias-de:test), or choose objective: equalise, which trains on any "
                             "pair set")
    triples = preference_triples({p.pair_id for p in pairs.pairs})
    if not triples:
        raise QueerbiasError(f"config key 'pairs.train': no frame of {pairs.name} yields a "
                             "prompt for preference data")
    return Dataset.from_list([{k: t[k] for k in ("prompt", "chosen", "rejected")} for t in triples])


def make_trainer(setup: TrainerSetup[DpoConfig]):
    """TRL's DPOTrainer for the base model, configured from our config and the `dpo` section."""
    config, lm, dpo = setup.config, setup.lm, setup.settings
    args = DPOConfig(**{**setup.arguments, "include_num_input_tokens_seen": "no"},
                     beta=dpo.beta, loss_type=[dpo.loss_type],
                     max_length=dpo.max_length,
                     precompute_ref_log_probs=False, dataset_num_proc=None)
    peft = lora_config(lm.model, config, lm.kind) if config.method == "lora" else None
    return DPOTrainer(model=lm.model, args=args, train_dataset=preference_dataset(setup.pairs),
                      processing_class=lm.tokenizer, callbacks=setup.callbacks, peft_config=peft)
