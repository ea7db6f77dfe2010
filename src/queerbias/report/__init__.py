"""The lower layer of reporting, which any suite may import: paired statistics, tables, plots.

`paired_stats` holds the tests, intervals and corrections (reusable by any suite with
paired items), `tables` and `plots` write and draw, `formatting` words a change and its
test, `options` declares the options of a comparison and `score_tables` sets runs'
headline figures side by side. The comparator that reads runs and suites is the layer
above (`queerbias.comparison`); nothing here imports a suite.
"""
