"""Reports on score runs: multi-model score tables and paired before/after comparisons.

`runs` loads and validates score directories, `paired_stats` holds the statistics
(reusable by any suite with paired items), `compare` and `checkpoints` build the delta
document, and `tables`, `delta_tables`, `score_tables` and `plots` render it.
"""
