"""run_gifi end to end on a tiny GPT-2, the CLI, and before/after comparison."""

import csv
import json

import numpy as np
import pytest
import yaml

from queerbias.cli import main
from queerbias.errors import QueerbiasError
from queerbias.suites.gifi import run_gifi
from queerbias.suites.gifi.config import GifiConfig
from queerbias.suites.gifi.prompts import default_prompts_path
from queerbias.suites.gifi.report import compare_summaries


@pytest.fixture(scope="module")
def short_prompts(tmp_path_factory):
    """The packaged prompts with a short PE format: the tiny GPT-2 sees only 128 tokens."""
    document = yaml.safe_load(default_prompts_path().read_text(encoding="utf-8"))
    document["pe"].update(format="{problem}", instruction="", templates=[
        {"problem": "{Nom} hat {a} Äpfel und kauft {b}. Wie viele?", "numbers": {"a": [1, 5], "b": [1, 5]},
         "answer": "a + b"}])
    path = tmp_path_factory.mktemp("prompts") / "prompts.yaml"
    path.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tiny_run(tiny_gpt2, tiny_classifier, short_prompts, tmp_path_factory):
    out = tmp_path_factory.mktemp("gifi-tiny")
    config = GifiConfig(groups=("er", "sie", "xier"), runs=2, limit=1, max_new_tokens=8, saof_names=1,
                        saof_samples=2, batch_size=8, sentiment_model=str(tiny_classifier),
                        toxicity_model=str(tiny_classifier), toxic_label="negative",
                        prompts=str(short_prompts))
    return out, run_gifi(str(tiny_gpt2), out, config=config, progress=False)


def test_outputs_and_counts(tiny_run):
    out, summary = tiny_run
    for name in ("generations.jsonl", "dimensions.csv", "groups.csv", "summary.md", "summary.json", "radar.png"):
        assert (out / name).is_file(), name
    rows = [json.loads(line) for line in (out / "generations.jsonl").read_text().splitlines()]
    per_run = 3 + 3 + 2 * 2 * 1 * 2 + 3  # gdr, counterfactual, saof (states x frames x names x samples), pe
    assert len(rows) == 2 * per_run
    assert {r["seed"] for r in rows} == {0, 1}
    assert all("detected" in r for r in rows if r["task"] in ("gdr", "saof"))
    counterfactual = [r for r in rows if r["task"] == "counterfactual"]
    assert all(("sentiment" in r and "toxicity" in r) != r["refusal"] for r in counterfactual)
    assert summary["dimensions"]["SN"]["groups"]["refused"]["n"] == sum(r["refusal"] for r in counterfactual)
    assert json.loads((out / "summary.json").read_text()) == summary


def test_summary_is_consistent_with_per_run_values(tiny_run):
    out, summary = tiny_run
    with open(out / "dimensions.csv") as handle:
        table = list(csv.DictReader(handle))
    for dim in ("GDR", "SN", "NTS", "CF", "PE"):
        entry = summary["dimensions"][dim]
        assert entry["computed"], (dim, entry.get("reason"))
        values = [float(r["value"]) for r in table if r["dimension"] == dim]
        assert entry["mean"] == pytest.approx(np.mean(values))
        assert entry["sd"] == pytest.approx(np.std(values, ddof=1))
        assert 0.0 <= entry["mean"] <= 1.0
    computed = summary["gifi"]["dimensions"]
    assert summary["gifi"]["n_dimensions"] == len(computed) >= 5
    assert summary["gifi"]["mean"] == pytest.approx(np.mean([summary["dimensions"][d]["mean"] for d in computed]))
    assert "English-trained" in summary["meta"]["notes"][0]
    assert summary["meta"]["decoding"]["top_p"] == 0.95
    assert "GIFI =" in (out / "summary.md").read_text()
    assert "refusals left out of SN, NTS and CF" in (out / "summary.md").read_text()


def test_too_long_prompts_are_refused(tiny_gpt2, tmp_path):
    config = GifiConfig(groups=("er", "sie"), dimensions=("PE",), limit=1, max_new_tokens=8)
    with pytest.raises(QueerbiasError, match="at most 128 tokens"):
        run_gifi(str(tiny_gpt2), tmp_path, config=config, progress=False)


def test_existing_run_is_not_overwritten(tiny_run, tiny_gpt2):
    out, _ = tiny_run
    with pytest.raises(QueerbiasError, match="already holds"):
        run_gifi(str(tiny_gpt2), out, config=GifiConfig(limit=1))


def test_missing_classifiers_are_reported_not_faked(tiny_gpt2, tmp_path):
    config = GifiConfig(groups=("er", "xier"), dimensions=("SN", "NTS", "GDR"), limit=1, max_new_tokens=4,
                        sentiment_model=None, toxicity_model=str(tmp_path / "absent"))
    summary = run_gifi(str(tiny_gpt2), tmp_path / "out", config=config, progress=False)
    assert summary["dimensions"]["SN"] == {**summary["dimensions"]["SN"], "computed": False,
                                           "reason": "no sentiment model configured"}
    assert "cannot load" in summary["dimensions"]["NTS"]["reason"]
    assert summary["dimensions"]["CF"]["reason"] == "not requested"
    assert summary["gifi"]["dimensions"] == ["GDR"] and summary["gifi"]["n_dimensions"] == 1
    rows = [json.loads(line) for line in (tmp_path / "out" / "generations.jsonl").read_text().splitlines()]
    assert not any("sentiment" in r for r in rows)


def test_cli_compare(tiny_run, tmp_path, capsys):
    out, _ = tiny_run
    assert main(["gifi", "compare", f"before={out}", f"after={out}", "--out", str(tmp_path / "cmp")]) == 0
    document = json.loads((tmp_path / "cmp" / "gifi_delta.json").read_text())
    assert document["comparisons"][0]["gifi"]["delta"] == 0.0
    for name in ("gifi_delta.md", "gifi_delta.csv", "gifi_delta.tex", "radar.png"):
        assert (tmp_path / "cmp" / name).is_file()
    assert "Δ after" in capsys.readouterr().out


def _summary(values: dict, checksum="abc", groups=("er", "sie")) -> dict:
    dims = {d: {"computed": d in values, "mean": values.get(d), "sd": None, "name": d}
            for d in ("GDR", "SN", "NTS", "CF", "SA", "OF", "PE")}
    return {"dimensions": dims, "groups": list(groups), "gifi": {}, "meta": {"data": {"checksum": checksum}}}


def test_compare_deltas_by_hand():
    before = _summary({"GDR": 0.5, "PE": 0.8, "SN": 0.9})
    after = _summary({"GDR": 0.75, "PE": 0.6})
    document = compare_summaries(("base", before), [("dpo", after)])
    entry = document["comparisons"][0]
    assert entry["dimensions"]["GDR"]["delta"] == pytest.approx(0.25)
    assert entry["dimensions"]["PE"]["delta"] == pytest.approx(-0.2)
    assert entry["dimensions"]["SN"]["delta"] is None  # only BEFORE computed it
    assert entry["common"] == ["GDR", "PE"]
    assert entry["gifi"] == pytest.approx({"before": 0.65, "after": 0.675, "n_dimensions": 2, "delta": 0.025})


def test_compare_refuses_different_prompts_or_groups():
    with pytest.raises(QueerbiasError, match="different GIFI prompts"):
        compare_summaries(("a", _summary({"GDR": 1})), [("b", _summary({"GDR": 1}, checksum="x"))])
    with pytest.raises(QueerbiasError, match="pronoun groups"):
        compare_summaries(("a", _summary({"GDR": 1})), [("b", _summary({"GDR": 1}, groups=("er",)))])
