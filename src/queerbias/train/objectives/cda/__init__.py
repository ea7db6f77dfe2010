"""`cda`: continued pretraining on a counterfactually augmented corpus (Webster et al. 2020)."""
