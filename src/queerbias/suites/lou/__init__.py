"""Lou (Waldis et al., EMNLP 2024): German text with six gender-fair reformulations.

Two views, two suites (`suite.py`): does a language model find gender-fair German as
likely as the original (`lou`, the LM view), and do classifiers keep their predictions
when people write inclusively (`lou-classifier`)?
"""
