"""Progress bars as every long step shows them: live on a terminal, sparse in a log, a widget in Jupyter.

`tqdm.auto` draws a widget in a notebook (with `ipywidgets`: `pip install 'queerbias[notebook]'`,
else text) and text elsewhere. On a terminal the bar redraws as usual; written to a file or
pipe (a study cell's log, a cluster job's output) it is redrawn at most every `LOG_INTERVAL_S`
seconds, so a log holds a line of progress per half minute rather than one per item, and a bar
inside another writes no cursor movements.
transformers' own bars around loading a model are switched off where it loads (`models.loading`).
"""

from __future__ import annotations

import sys

LOG_INTERVAL_S = 30.0


def bar(**options):
    """A `tqdm.auto` bar with the project's defaults (dynamic width; sparse when not on a terminal)."""
    from tqdm.auto import tqdm  # looks for a notebook (IPython) as it imports: only when a bar is drawn

    stream = options.get("file") or sys.stderr
    interactive = getattr(stream, "isatty", lambda: False)() or "ipykernel" in sys.modules
    # in a log, a bar inside another (an evaluation during training) would move the cursor with escape codes
    sparse = {} if interactive else {"mininterval": LOG_INTERVAL_S, "position": 0}
    return tqdm(dynamic_ncols=True, **sparse, **options)
