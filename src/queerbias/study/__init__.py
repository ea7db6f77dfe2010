"""A study: every model × training run × seed as an ordinary training run, and one report.

`config` reads and checks the study file, `cells` turns it into cells (one training run
each, in `STUDY/runs/<model>/<run>/seed-<s>/`) and prepares their folders, `execution`
runs them as subprocesses (side by side with `--jobs`), `aggregate` reads what the cells
wrote into per-group and per-method figures over seeds, and `tables`, `figures` and
`html` write the report (`report` puts it together). docs/study.md.
"""
