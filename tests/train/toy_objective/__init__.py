"""A toy objective, the whole of it in one folder as docs/new-objective.md walks through it:
language modelling on a corpus in which every document is repeated."""
