"""Training objectives beyond plain language modelling (config key `objective`).

- `lm`: continued pretraining on the corpus (the seed study), `train.runner` alone.
- `cda`: the same on a counterfactually augmented corpus (`cda`, after Webster et al. 2020).
- `equalise`: language modelling plus a loss on counterfactual pairs that makes the
  benchmark's own score indifferent to the identity phrase (`equalise`).
- `dpo`: preference tuning through TRL's `DPOTrainer` on stereotype frames (`dpo`).

`pairs` holds what the pair objectives share: the training pairs, the guard that keeps
them apart from the evaluation pairs, and seeded, group-balanced pair batches.
"""
