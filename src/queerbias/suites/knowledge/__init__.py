"""The knowledge guard: does the model still know what identity words mean?

Definitional pairs (`queerbias-knowledge`, data/knowledge/README.md) scored with the pair
scorer; accuracy and margin instead of a bias score (suite.py, figures.py).
"""
