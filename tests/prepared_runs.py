"""Finished runs prepared for the bad-input table (tests/test_bad_inputs.py): pair runs in the
scorer's contract or written by the store, a GRUFF run, and the ways users damage them
(truncated or edited files, NaN, an emptied summary)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from queerbias.options import to_dict
from queerbias.suites.gruff.suite import GruffSuite
from queerbias.suites.store import summarise_rows, write_run
from report.score_dirs import make_pairs, write_score_dir


def pair_run(tmp: Path, name: str = "a", **options) -> Path:
    """A pair run written to the scorer's contract (synthetic scores)."""
    return write_score_dir(tmp / name, make_pairs(), **options)


def fresh_pair_runs(tmp: Path) -> tuple[Path, Path]:
    """Two pair runs written by the store (pairs.csv checksummed in summary.json)."""
    from queerbias.suites.pairs.declaration import PairSettings
    from queerbias.suites.pairs.suite import PairsSuite

    suite, paths = PairsSuite(), []
    for name in ("a", "b"):
        frame = make_pairs(seed=len(paths))
        rows = [{**r, "direction": "stereo"} for r in frame.to_dict("records")]
        meta = {"model": {"spec": name}, "data": {"name": "synthetic", "checksum": "sha256:x"},
                "settings": to_dict(PairSettings()), "scoring": {"deviations": {}}, "scoring_id": "cfg"}
        (tmp / name).mkdir()
        write_run(suite, summarise_rows(suite, rows, PairSettings(), meta), tmp / name)
        paths.append(tmp / name)
    return paths[0], paths[1]


def gruff_run(tmp: Path) -> Path:
    """A GRUFF run folder from two hand-made rows."""
    rows = [{"replicate": 0, "item_id": f"none:t{i}:masculine", "setting": "none", "n_distractors": None,
             "occupation": "Arzt", "participant": "Kunde", "case": "nom", "system": "masculine", "target": "er",
             "distractor_system": None, "distractor": None, "text": f"Text {i}", "score_er": -1.0, "score_sie": -2.0,
             "score_en": -3.0, "score_xier": -4.0, "answer": "er", "correct": True, "distractor_error": False,
             "tie": False} for i in range(2)]
    suite = GruffSuite()
    settings = suite.Settings(settings=("none",))
    meta = {"model": {"spec": "m"}, "settings": to_dict(settings),
            "data": {"name": "gruff", "checksum": "t", "generation": {"pairing": "default", "replicates": 1,
                                                                       "seed": 0, "n": None},
                     "templates": {"checksum": "t", "n_task": 1, "n_context": 0, "source": "here"}},
            "scoring": {"method": "forced choice", "bos": "auto"}, "scoring_id": "s"}
    (tmp / "gruff").mkdir()
    write_run(suite, summarise_rows(suite, rows, settings, meta), tmp / "gruff")
    return tmp / "gruff"


def summary_edit(path: Path, change) -> Path:
    summary = json.loads((path / "summary.json").read_text())
    change(summary)
    (path / "summary.json").write_text(json.dumps(summary))
    return path


def truncated(path: Path) -> Path:
    text = (path / "summary.json").read_text()
    (path / "summary.json").write_text(text[: len(text) // 2])
    return path


def with_nan(path: Path) -> Path:
    text = (path / "summary.json").read_text()
    (path / "summary.json").write_text(text.replace('"bias_score": ', '"bias_score": NaN, "x": ', 1))
    return path


def emptied(summary: dict) -> None:
    summary["overall"].update(n=0, bias_score=None)


def biased_flipped(path: Path) -> Path:
    """The first pair's `biased` flag flipped, as a careless edit would."""
    lines = (path / "pairs.csv").read_text().splitlines()
    cells = lines[1].split(",")
    index = lines[0].split(",").index("biased")
    cells[index] = "0" if cells[index] == "1" else "1"
    lines[1] = ",".join(cells)
    (path / "pairs.csv").write_text("\n".join(lines) + "\n")
    return path


def row_deleted(path: Path) -> Path:
    lines = (path / "pairs.csv").read_text().splitlines()
    (path / "pairs.csv").write_text("\n".join(lines[:1] + lines[2:]) + "\n")
    return path


def config_file(tmp: Path, text: str) -> str:
    (tmp / "config.yaml").write_text(text)
    return str(tmp / "config.yaml")


def fifo(tmp: Path) -> str:
    os.mkfifo(tmp / "fifo.yaml")
    return str(tmp / "fifo.yaml")


def fifo_summary(path: Path) -> Path:
    (path / "summary.json").unlink()
    os.mkfifo(path / "summary.json")
    return path


def compare(*runs) -> list[str]:
    return ["compare", *map(str, runs), "--out", str(runs[0].parent / "delta"), "--resamples", "50"]
