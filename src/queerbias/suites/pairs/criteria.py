"""How a training run picks its best checkpoint on a pair benchmark (`compare.best`, `--best`).

Light: the suite class names them, and the CLI lists them in its help.
"""

from __future__ import annotations

from queerbias.suites.protocol import Criterion

CRITERIA = {
    "closest50": Criterion("overall bias score closest to 50 (no preference between the sentences)", ("bias",),
                           lambda row: (abs(row["bias"] - 50.0),)),
    "lowest": Criterion("lowest overall bias score", ("bias",), lambda row: (row["bias"],)),
    "distance": Criterion("lowest distance to indifference (mean over groups of |bias score - 50|; ties: soft)",
                          ("distance_bias", "distance_soft"),
                          lambda row: (row["distance_bias"], row["distance_soft"]), "the distance to indifference"),
}
