"""Bad inputs of run, score, compare, report and the suite aliases: one clear line, exit 2.

A table of (case, command line built from a prepared folder, expected message fragment),
issue 16's format: a new bad input is one row. Nothing here loads a model; every refusal
happens before one would load.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from queerbias.cli import main
from queerbias.suites.gruff.suite import GruffSuite
from queerbias.suites.settings import to_dict
from queerbias.suites.store import summarise_rows, write_run
from report.score_dirs import make_pairs, write_score_dir


def pair_run(tmp: Path, name: str = "a", **options) -> Path:
    """A pair run written to the scorer's contract (synthetic scores)."""
    return write_score_dir(tmp / name, make_pairs(), **options)


def fresh_pair_runs(tmp: Path) -> tuple[Path, Path]:
    """Two pair runs written by the store (pairs.csv checksummed in summary.json)."""
    from queerbias.suites.pairs.suite import PairSettings, PairsSuite

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


def edited(path: Path, old: str, new: str, file: str = "pairs.csv") -> Path:
    text = (path / file).read_text()
    (path / file).write_text(text.replace(old, new, 1))
    return path


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


def compare(*runs) -> list[str]:
    return ["compare", *map(str, runs), "--out", str(runs[0].parent / "delta"), "--resamples", "50"]


CASES = [
    ("sample 0", lambda t: ["run", "pairs", "--sample", "0", "--out", str(t / "o")], "--sample must be at least 1"),
    ("sample negative", lambda t: ["score", "--sample", "-3", "--out", str(t / "o")], "--sample must be at least 1"),
    ("chunk 0", lambda t: ["score", "--chunk-pairs", "0", "--out", str(t / "o")], "--chunk-pairs must be at least 1"),
    ("batch 0", lambda t: ["run", "gruff", "--batch-size", "0"], "--batch-size must be auto or a positive integer"),
    ("not a number", lambda t: ["run", "lou", "--sample", "many"], "--sample must be an integer"),
    ("unknown choice", lambda t: ["run", "gruff", "--settings", "d9"], "--settings[0] must be one of none, d0"),
    ("empty --out", lambda t: ["run", "gruff", "--out", ""], "--out must name a directory"),
    ("--out is a file", lambda t: ["score", "--out", str(pair_run(t) / "pairs.csv")], "is a file, not a directory"),
    ("gifi config a list", lambda t: ["gifi", "run", "--config", config_file(t, "- a\n- b\n")],
     "a GIFI config must be a YAML mapping of keys to values, not a list"),
    ("gifi config a number", lambda t: ["gifi", "run", "--config", config_file(t, "3\n")],
     "a GIFI config must be a YAML mapping of keys to values, not a number"),
    ("gifi config unknown key", lambda t: ["gifi", "run", "--config", config_file(t, "limits: 3\n")],
     "config.yaml.limits is not a setting of this suite"),
    ("gifi config a FIFO", lambda t: ["gifi", "run", "--config", fifo(t)], "fifo.yaml: GIFI config is not a regular file but a FIFO"),
    ("one run", lambda t: compare(pair_run(t)), "need a BEFORE and at least one AFTER run"),
    ("unfinished run", lambda t: compare(pair_run(t), t / "missing"), "not a directory"),
    ("truncated pair summary", lambda t: compare(pair_run(t), truncated(pair_run(t, "b"))), "not valid JSON"),
    ("truncated gruff summary", lambda t: ["gruff", "compare", str(gruff_run(t)), str(truncated(pair_run(t))),
                                           "--out", str(t / "d")], "not valid JSON"),
    ("NaN in a summary", lambda t: compare(pair_run(t), with_nan(pair_run(t, "b"))), "non-finite number NaN"),
    ("empty run", lambda t: compare(pair_run(t), summary_edit(pair_run(t, "b"), emptied)), "an empty run"),
    ("report on an empty run", lambda t: ["report", str(summary_edit(pair_run(t), emptied)), "--out", str(t / "r")],
     "an empty run"),
    ("two suites", lambda t: compare(pair_run(t), gruff_run(t)), "a is a pairs run, gruff a gruff run"),
    ("gruff alias on a pair run", lambda t: ["gruff", "compare", str(pair_run(t)), str(pair_run(t, "b")),
                                             "--out", str(t / "d")], "is a pairs run, not a gruff run"),
    ("edited biased column", lambda t: compare(*(lambda a, b: (a, biased_flipped(b)))(*fresh_pair_runs(t))),
     "pairs.csv: changed after the run"),
    ("row deleted from both runs", lambda t: compare(*map(row_deleted, fresh_pair_runs(t))),
     "pairs.csv: changed after the run"),
    ("edited biased, old run", lambda t: compare(pair_run(t), biased_flipped(pair_run(t, "b"))),
     "biased of pair 0000 does not follow from its scores"),
    ("row deleted, old runs", lambda t: compare(row_deleted(pair_run(t)), row_deleted(pair_run(t, "b"))),
     "99 pairs, but the run scored 100"),
    ("unknown suite", lambda t: compare(pair_run(t), summary_edit(pair_run(t, "b"), lambda s: s.update(suite="x"))),
     "unknown suite 'x'"),
    ("old gruff run", lambda t: compare(pair_run(t), summary_edit(pair_run(t, "b"), lambda s: (
        s.pop("overall"), s["meta"].update(suite="gruff")))), "written before the suites shared one run format"),
    ("newer schema", lambda t: compare(pair_run(t), summary_edit(pair_run(t, "b"),
                                                                 lambda s: s.update(schema_version=99))),
     "written by a newer queerbias"),
]


@pytest.mark.parametrize(("build", "message"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_bad_input_is_one_clear_line(build, message, tmp_path, capsys):
    argv = build(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
