"""Mitigation fine-tuning: continue training a masked or causal LM on a corpus and
score bias and held-out perplexity at every checkpoint (`queerbias train`)."""
