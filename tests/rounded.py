"""A score written to `decimals` places, checked against a reference loop's unrounded value.

Two exact implementations that sum log-probabilities in a different order (batched and padded,
or one sentence at a time) agree only up to float noise, so `round(raw, 3)` can differ by one
unit in the last place when the raw value sits within that noise of a rounding boundary
(Gemma 3 270M in float32: sums of about 60 nats agree to 6e-5). Equality of the rounded values
is then a coin toss on the CPU's kernels, not a property of the code.
"""

from __future__ import annotations


def rounds_from(written: float, raw: float, decimals: int = 3, noise: float = 1e-5) -> bool:
    """Whether `written` is `raw` rounded to `decimals` places up to float noise: it lies on the
    grid and within half a unit (plus `noise`) of `raw`. That is round(raw, decimals) itself unless
    raw lies within `noise` of a boundary, where either neighbour is right."""
    return round(written, decimals) == written and abs(written - raw) <= 0.5 * 10**-decimals + noise
