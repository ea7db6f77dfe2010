"""GIFI-DE: the Gender Inclusivity Fairness Index (Shan, Diana & Zhou, ACL 2025) for German.

Seven dimensions in [0, 1] from generations of a causal LM, prompted with German
pronoun groups (er, sie, neopronouns, name only) and averaged into one index.
`suite.GifiSuite` is what `queerbias run gifi` and training use.
"""
