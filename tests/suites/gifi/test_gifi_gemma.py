"""GIFI-DE end to end on the embedded Gemma 3 270M, with a small prompt set."""

import json

import pytest

from queerbias.suites.gifi.config import GifiConfig
from queerbias.suites.gifi.suite import GifiSuite
from queerbias.suites.store import run_to_dir


@pytest.mark.slow
def test_gemma_end_to_end(tmp_path):
    config = GifiConfig(groups=("er", "xier"), sample=1, max_new_tokens=12, saof_names=1, saof_samples=1,
                        sentiment_model=None, toxicity_model=None, n_resamples=100)
    summary = run_to_dir(GifiSuite(), "embedded:gemma-3-270m", None, tmp_path, config, progress=False)
    rows = [json.loads(line) for line in (tmp_path / "generations.jsonl").read_text().splitlines()]
    assert len(rows) == 2 + 2 + 2 * 2 + 2
    assert all(r["generation"] and not r["generation"].startswith(r["prompt"]) for r in rows)
    for dim in ("GDR", "CF", "PE"):
        assert summary["dimensions"][dim]["computed"], summary["dimensions"][dim].get("reason")
        assert 0.0 <= summary["dimensions"][dim]["mean"] <= 1.0
    assert summary["dimensions"]["SN"]["reason"] == "no sentiment model configured"
    assert 3 <= summary["gifi"]["n_dimensions"] <= 5
    assert summary["meta"]["model"]["spec"] == "embedded:gemma-3-270m"
    assert (tmp_path / "summary.png").stat().st_size > 0
