"""bench/seed_scale.py: the formula of the seed study's scale (docs/study.md), checked by hand on given
measurements; the measurements themselves are the benchmark's (they take minutes on a CPU)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

from seed_scale import MODELS, estimate  # noqa: E402


def test_the_formula_by_hand():
    found = {"requests_per_pair": 5.0, "s_per_request": 0.002, "s_per_sequence": 0.5, "params": 100_000_000,
             "bytes_per_pair": 1500.0}
    # 4.9M words at 1.5 tokens a word, in sequences of 510 tokens: 14,412; batch 8 × 10: 181 steps an epoch
    got = estimate("gpt2", found, 1.5, gpu_tflops=25.0)
    assert got["steps"] == 3 * math.ceil(math.ceil(4_900_000 * 1.5 / 510) / 80) == 543
    assert got["evaluations"] == 1 + 3 * 2  # checkpoints at 500 and at the end
    pairs = 45_540 + 387
    assert got["scoring_h"] == pytest.approx(7 * pairs * 5.0 * 0.002 / 3600)
    assert got["training_h"] == pytest.approx(3 * 543 * 80 * 0.5 / 3600)
    assert got["disk"] == pytest.approx(3 * (2 * 16 + 4) * 1e8 + 7 * pairs * 1500.0)
    assert got["speedup"] == pytest.approx(25e12 / (6 * 1e8 * 512 / 0.5))
    bloom = estimate("bloom-560m", found, 1.5, gpu_tflops=None)  # batch 4: twice the steps
    assert bloom["steps"] == 3 * math.ceil(14_412 / 40) and bloom["speedup"] is None
    assert set(MODELS) == {"bloom-560m", "german_bert", "gpt2", "multi_bert", "opt-350m", "xlm-clm", "xlm-mlm",
                           "xlm-roberta"}
