"""bench/unseen_frames.py: a study's checkpoints scored on queerbias-de-unseen-frames, the base once per model."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

from unseen_frames import BENCHMARK, main  # noqa: E402


def test_the_last_checkpoint_of_each_cell_against_the_base_scored_once(tmp_path, tiny_gemma, monkeypatch, capsys):
    study = tmp_path / "study"
    cells = [study / "runs" / "tiny" / run / "seed-0" for run in ("keep", "scaled")]
    for cell in cells:
        cell.mkdir(parents=True)
        (cell / "study-cell.yaml").write_text(yaml.safe_dump({"model": str(tiny_gemma)}))
        for step in (2, 4):  # the weights of the base: every figure unchanged
            shutil.copytree(tiny_gemma, cell / f"checkpoint-{step}")
    monkeypatch.setattr(sys, "argv", ["unseen_frames.py", "--study", str(study), "--sample", "24"])
    main()
    base = json.loads((study / "base" / "tiny" / BENCHMARK / "summary.json").read_text())
    assert base["overall"]["n"] == 24
    for cell in cells:  # the final checkpoint only, unless --every
        judged = study / "judged" / cell.relative_to(study / "runs")
        assert (judged / "checkpoint-4" / BENCHMARK / "summary.json").is_file()
        assert not (judged / "checkpoint-2").exists() and not (cell / "checkpoint-4" / BENCHMARK).exists()
    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if line.startswith("Base")] == [
        f"Base (tiny): 24 pairs, stereotype excess {base['direction']['stereotype_excess']:.2f}, soft distance "
        f"{base['distance']['soft']:.2f}, binary distance {base['distance']['bias']:.2f} (coin-flip floor "
        f"{base['noise_floor']['floor']:.2f})."]
    rows = [line for line in out if line.startswith("| keep") or line.startswith("| scaled")]
    excess = f"{base['direction']['stereotype_excess']:.2f}"
    assert rows == [f"| keep | 0 | 4 | {excess} | +0.0% | none | – |", f"| scaled | 0 | 4 | {excess} | +0.0% | none | – |"]
