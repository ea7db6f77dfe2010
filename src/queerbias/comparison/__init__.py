"""The comparator: runs of one suite before and after, as one delta document.

The upper layer of reporting: it reads runs through `suites.store` and asks each run's
suite what to test (`Suite.paired_cells`, `extras`), then uses the lower layer
(`queerbias.report`: paired statistics, tables, plots, formatting), which suites may
import too. `runs` loads and aligns runs, `compare` builds and writes the delta document,
`checkpoints` its trajectory and best checkpoint, `delta_tables` and `delta_plots` draw it.
"""
