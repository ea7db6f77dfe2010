"""Training objectives (config key `objective`), one folder each, named in `registry`.

- `lm`: continued pretraining on the corpus (the seed study).
- `cda`: the same on a counterfactually augmented corpus (after Webster et al. 2020).
- `equalise`: language modelling plus a loss on counterfactual pairs that makes the
  benchmark's own score indifferent to the identity phrase.
- `dpo`: preference tuning through TRL's `DPOTrainer` on stereotype frames.
- `contrast`: a one-sided loss on each group's association with its stereotypes against
  neutral predicates of the same frame.

Each folder has the shape `protocol` describes (`config.py`: the section; `objective.py`: the
declaration; `trainer.py`: `make_trainer`); docs/new-objective.md adds one.
"""
