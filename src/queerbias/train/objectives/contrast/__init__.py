"""`contrast`: train the association c, the stereotype against the neutral predicates of the same frame."""
