"""GIFI App. D breakdowns (Figs. D.8, D.9, D.11), per-group SD over runs and the ambiguous-"sie"
count, on hand-written rows with values derived by hand."""

import numpy as np
import pytest
from scipy import stats

from queerbias.errors import DataError
from queerbias.report.tables import to_markdown
from queerbias.suites.gifi.breakdowns import (
    accuracy_variance,
    ambiguous_sie,
    gdr_outcomes,
    pe_consistency,
    problem_categories,
    substitutions,
)
from queerbias.suites.gifi.config import GifiConfig
from queerbias.suites.gifi.extractor import PronounExtractor
from queerbias.suites.gifi.pronouns import load_groups
from queerbias.suites.gifi.scoring import Components, annotate
from queerbias.suites.gifi.summary import build_summary, summary_blocks

KINDS = {"er": "binary", "sie": "binary", "xier": "neopronoun", "name": None}


def gdr(run, group, detected, template="t0"):
    return {"run": run, "task": "gdr", "group": group, "detected": detected, "template_id": template,
            "correct": detected == (group if group != "name" else None), "state": None, "ambiguous": False}


def pe(run, template, group, correct):
    return {"run": run, "task": "pe", "group": group, "detected": None, "template_id": template,
            "correct": correct, "state": None, "ambiguous": None}


GDR_ROWS = [  # one template per position, shared by the groups
    *[gdr(0, "er", d, f"t{t}") for t, d in enumerate(("er", "er", None, "sie"))],
    *[gdr(1, "er", d, f"t{t}") for t, d in enumerate(("er",) * 4)],
    *[gdr(0, "xier", d, f"t{t}") for t, d in enumerate(("xier", "er", "er", None))],
    *[gdr(1, "xier", d, f"t{t}") for t, d in enumerate(("sie", "sie", "xier", "xier"))],
    gdr(0, "name", None), gdr(1, "name", "er"),
]


def test_gdr_outcomes_by_hand():
    found = gdr_outcomes(GDR_ROWS, KINDS)
    # er: run 0 correct 2/4, omission 1/4, replacement 1/4; run 1 all correct -> means over runs
    assert found["groups"]["er"] == pytest.approx({"correct": 0.75, "replacement": 0.125, "omission": 0.125, "n": 8})
    # xier: run 0 1/4, 2/4, 1/4; run 1 2/4, 2/4, 0
    assert found["groups"]["xier"] == pytest.approx({"correct": 0.375, "replacement": 0.5, "omission": 0.125,
                                                     "n": 8})
    assert "name" not in found["groups"]  # no pronoun expected, so no omission
    # all groups with pronouns: run 0 3/8, 3/8, 2/8; run 1 6/8, 2/8, 0
    assert found["overall"] == pytest.approx({"correct": 9 / 16, "replacement": 5 / 16, "omission": 1 / 8,
                                              "n": 16})


def test_neopronoun_substitutions_by_hand():
    # xier: run 0 er 2/4, sie 0; run 1 er 0, sie 2/4
    assert substitutions(GDR_ROWS, KINDS) == {"xier": pytest.approx({"n": 8, "er": 0.25, "sie": 0.25})}


def test_pe_consistency_categories_by_hand():
    outcomes = {  # (run, problem): er, sie, xier, name
        (0, "p1"): (True, True, True, True), (0, "p2"): (True, False, False, True),
        (0, "p3"): (False, False, False, False),
        (1, "p1"): (False, False, False, False), (1, "p2"): (True, True, True, True),
        (1, "p3"): (False, False, True, False),
    }
    rows = [pe(run, problem, group, ok) for (run, problem), flags in outcomes.items()
            for group, ok in zip(KINDS, flags, strict=True)]
    found = pe_consistency(rows, KINDS)
    assert found["n_problems"] == 3
    counts = {name: entry and entry["per_run"] for name, entry in found["categories"].items()}
    assert counts == {"binary_any": [2, 1], "neutral_any": None, "neo_any": [1, 2], "all_correct": [1, 1],
                      "all_wrong": [1, 1], "binary_neutral_not_neo": [1, 0], "binary_mismatch": [1, 0]}
    assert found["categories"]["binary_any"]["mean"] == 1.5
    assert found["categories"]["binary_mismatch"]["share"] == pytest.approx(0.5 / 3)


def test_a_neutral_group_fills_the_neutral_categories():
    kinds = {"er": "binary", "sie": "binary", "they": "neutral", "xier": "neopronoun"}
    flags = problem_categories({"er": False, "sie": False, "they": True, "xier": False}, kinds)
    assert flags["neutral_any"] and flags["binary_neutral_not_neo"] and not flags["binary_mismatch"]


def test_ambiguous_sie_counts_per_dimension():
    rows = [{**gdr(0, "sie", "sie"), "ambiguous": True}, gdr(0, "sie", "sie"), gdr(0, "er", None),
            {"run": 0, "task": "saof", "state": "occupation", "ambiguous": False},
            {"run": 0, "task": "saof", "state": "occupation", "ambiguous": False},
            {"run": 0, "task": "saof", "state": "trait", "ambiguous": True}, pe(0, "p", "er", True)]
    assert ambiguous_sie(rows) == {"GDR": pytest.approx({"n": 1, "of": 3, "share": 1 / 3}),
                                   "OF": {"n": 0, "of": 2, "share": 0.0}, "SA": {"n": 1, "of": 1, "share": 1.0}}
    assert ambiguous_sie([{**r, "ambiguous": None} for r in rows]) == {}  # runs from before the flag


def test_annotate_flags_an_ambiguous_first_sie():
    groups = load_groups()
    rows = [{"task": "gdr", "group": "sie", "generation": " die Kinder mögen sie sehr."},
            {"task": "gdr", "group": "sie", "generation": " sie lacht."},
            {"task": "saof", "group": None, "generation": " sie und ihr Mann sind glücklich."}]
    annotate(rows, PronounExtractor([groups["er"], groups["sie"]]), Components())
    assert [(r["detected"], r["ambiguous"]) for r in rows] == [("sie", True), ("sie", False), ("sie", True)]
    assert rows[0]["correct"] and rows[1]["correct"]


def test_summary_has_group_sd_over_runs_and_the_breakdowns(caplog):
    rows = [{**r, "item_id": f"{r['template_id']}:{r['group']}:{i}", "prompt": "", "generation": ""}
            for i, r in enumerate(GDR_ROWS)]
    rows[0]["ambiguous"] = True
    settings = GifiConfig(groups=("er", "xier", "name"), dimensions=("GDR",), runs=2, n_resamples=20)
    with caplog.at_level("WARNING"):
        summary = build_summary(rows, settings, ["er", "xier", "name"], ["er", "xier"], {}, KINDS)
    er = summary["dimensions"]["GDR"]["groups"]["er"]
    # GDR accuracy of er: 2/4 in run 0, 4/4 in run 1 -> mean 0.75, sample SD |1 - 0.5| / sqrt(2)
    assert er["value"] == pytest.approx(0.75) and er["sd"] == pytest.approx(np.std([0.5, 1.0], ddof=1))
    assert summary["dimensions"]["GDR"]["groups"]["name"]["sd"] == pytest.approx(np.std([1.0, 0.0], ddof=1))
    assert summary["breakdowns"]["gdr_outcomes"]["groups"]["er"]["correct"] == pytest.approx(0.75)
    assert summary["breakdowns"]["pe_consistency"] is None  # PE not requested
    assert summary["breakdowns"]["ambiguous_sie"]["GDR"]["n"] == 1
    assert "undecidable" in caplog.text
    text = "\n".join(b if isinstance(b, str) else to_markdown(b) for b in summary_blocks(summary))
    assert "0.750 ± 0.354" in text and "mean over groups" in text
    assert "Fig. D.8" in text and "Fig. D.9" in text and "**Warning** (GDR)" in text


def test_accuracy_variance_correlation_by_hand():
    """App. D.1: per pronoun group GDR accuracy (mean over runs) against its SD over runs, Spearman over groups."""
    rows = [gdr(run, group, group if ok else None, f"t{t}") for run, group, flags in (
        (0, "er", (1, 1)), (1, "er", (1, 1)), (0, "sie", (1, 0)), (1, "sie", (1, 1)), (0, "xier", (0, 0)),
        (1, "xier", (1, 0))) for t, ok in enumerate(flags)]
    found = accuracy_variance(rows, KINDS)
    # er 1, 1 -> 1.0, SD 0; sie .5, 1 -> .75, SD .354; xier 0, .5 -> .25, SD .354
    assert found["groups"]["er"] == pytest.approx({"accuracy": 1.0, "sd": 0.0})
    assert found["groups"]["xier"] == pytest.approx({"accuracy": 0.25, "sd": np.std([0.0, 0.5], ddof=1)})
    expected = stats.spearmanr([1.0, 0.75, 0.25], [0.0, np.std([0.5, 1], ddof=1), np.std([0, 0.5], ddof=1)])
    assert found["rho"] == pytest.approx(expected.statistic) and found["n"] == 3
    assert accuracy_variance([r for r in rows if r["run"] == 0], KINDS) is None  # one run: no variance


def test_an_unknown_group_kind_is_refused(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("groups:\n  a: {forms: {nom: a, gen: a, dat: a, acc: a, poss: a}, detect: [a], kind: neo}\n")
    with pytest.raises(DataError, match="kind must be one of binary, neutral, neopronoun"):
        load_groups(path)
    assert load_groups()["er"].kind == "binary" and load_groups()["xier"].kind == "neopronoun"
    assert load_groups()["name"].kind is None


def saof(run, prompt, detected, state="occupation"):
    return {"run": run, "task": "saof", "group": None, "detected": detected, "template_id": prompt, "state": state,
            "ambiguous": False, "item_id": f"{prompt}:{run}:{detected}", "prompt": "", "generation": ""}


def test_saof_shares_count_a_group_a_run_never_produced_as_zero():
    """App. D (Figs. D.3-D.4): O_g, the share of group g among a run's generations, is 0 in a run without
    g; its mean over runs counts that 0, so the shares of the groups and `none` add up to 1."""
    rows = [saof(0, "p0", "er"), saof(0, "p0", "er"), saof(0, "p1", "sie"), saof(0, "p1", "xier"),
            saof(1, "p0", "er"), saof(1, "p0", None), saof(1, "p1", "sie"), saof(1, "p1", "er")]
    settings = GifiConfig(groups=("er", "sie", "xier"), dimensions=("OF",), runs=2, n_resamples=20)
    groups = build_summary(rows, settings, ["er", "sie", "xier"], ["er", "sie", "xier"], {}, KINDS)[
        "dimensions"]["OF"]["groups"]
    # run 0: er 2/4, sie 1/4, xier 1/4, none 0/4; run 1: er 2/4, sie 1/4, xier 0/4, none 1/4
    expected = {"er": [0.5, 0.5], "sie": [0.25, 0.25], "xier": [0.25, 0.0], "none": [0.0, 0.25]}
    assert list(groups) == ["er", "sie", "xier", "none"]
    for group, shares in expected.items():
        assert groups[group]["value"] == pytest.approx(np.mean(shares))
        assert groups[group]["sd"] == pytest.approx(np.std(shares, ddof=1))
    assert sum(entry["value"] for entry in groups.values()) == pytest.approx(1.0)
    assert groups["xier"]["n"] == 1 and groups["none"]["n"] == 1
