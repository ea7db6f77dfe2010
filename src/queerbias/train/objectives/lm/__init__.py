"""`lm`: continued pretraining on the corpus, the seed study's method (Morch & Braun 2026, section 3.4)."""
