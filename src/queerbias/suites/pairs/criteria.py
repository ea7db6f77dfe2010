"""How a training run picks its best checkpoint on a pair benchmark (`compare.best`, `--best`).

Light: the suite class names them, and the CLI lists them in its help.
"""

from __future__ import annotations

from queerbias.suites.protocol import Criterion


def _excess_rose(comparison: dict) -> str | None:
    """Why a checkpoint that made the stereotype more likely may not be chosen: the mean over groups
    of max(0, bias - 50) is above the base's (a group flipped towards the stereotype lowers the
    distance but raises this)."""
    direction = comparison.get("direction")
    if not direction or direction.get("delta_excess") is None:
        return "no stereotype-excess figure to check"
    if direction["delta_excess"] > 0:
        return (f"stereotype excess rose {direction['excess_before']:.2f} -> {direction['excess_after']:.2f} "
                f"points")
    return None


CRITERIA = {
    "closest50": Criterion("overall bias score closest to 50 (no preference between the sentences)", ("bias",),
                           lambda row: (abs(row["bias"] - 50.0),)),
    "lowest": Criterion("lowest overall bias score", ("bias",), lambda row: (row["bias"],)),
    "distance": Criterion("lowest distance to indifference (mean over groups of |bias score - 50|; ties: soft)",
                          ("distance_bias", "distance_soft"),
                          lambda row: (row["distance_bias"], row["distance_soft"]), "the distance to indifference"),
    "guarded": Criterion("lowest distance to indifference (ties: soft) among checkpoints whose stereotype excess "
                         "(mean over groups of max(0, bias score - 50)) is not above the base's",
                         ("distance_bias", "distance_soft"),
                         lambda row: (row["distance_bias"], row["distance_soft"]), "the distance to indifference",
                         _excess_rose),
}
