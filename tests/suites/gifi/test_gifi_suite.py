"""GIFI-DE through the run store and the comparator on a tiny GPT-2, and compare statistics by hand."""

import json

import numpy as np
import pytest
import yaml

from queerbias.cli import main
from queerbias.comparison.compare import compare_runs
from queerbias.comparison.runs import load_run
from queerbias.errors import QueerbiasError
from queerbias.options import to_dict
from queerbias.report.options import CompareOptions
from queerbias.suites.gifi.config import GifiConfig
from queerbias.suites.gifi.prompts import default_prompts_path
from queerbias.suites.gifi.suite import GifiSuite
from queerbias.suites.store import run_to_dir, summarise_rows, write_run


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


def tiny_config(tiny_classifier, **changes) -> GifiConfig:
    return GifiConfig(**{"groups": ("er", "sie", "xier"), "runs": 2, "sample": 1, "max_new_tokens": 8,
                         "saof_names": 1, "saof_samples": 2, "batch_size": 8, "sentiment_model": str(tiny_classifier),
                         "toxicity_model": str(tiny_classifier), "toxic_label": "negative", "n_resamples": 100,
                         **changes})


@pytest.fixture(scope="module")
def tiny_run(tiny_gpt2, tiny_classifier, short_prompts, tmp_path_factory):
    out = tmp_path_factory.mktemp("gifi-tiny")
    return out, run_to_dir(GifiSuite(), str(tiny_gpt2), str(short_prompts), out, tiny_config(tiny_classifier),
                           progress=False)


def test_outputs_and_counts(tiny_run):
    out, summary = tiny_run
    assert {p.name for p in out.iterdir()} == {"generations.jsonl", "summary.md", "summary.json", "summary.png"}
    rows = [json.loads(line) for line in (out / "generations.jsonl").read_text().splitlines()]
    per_run = 3 + 3 + 2 * 2 * 1 * 2 + 3  # gdr, counterfactual, saof (states x frames x names x samples), pe
    assert len(rows) == 2 * per_run and {r["run"] for r in rows} == {0, 1}
    assert all(r["detected"] is not None or r["task"] not in ("gdr", "saof") or r["generation"] is not None
               for r in rows)
    counterfactual = [r for r in rows if r["task"] == "counterfactual"]
    # refusals get no classifier score or embedding (left out of SN, NTS and CF)
    assert all((r["sentiment"] is not None and r["toxicity"] is not None and len(r["embedding"]) == 384)
               != r["refusal"] for r in counterfactual)
    assert summary["dimensions"]["SN"]["groups"]["refused"]["n"] == sum(r["refusal"] for r in counterfactual)
    assert json.loads((out / "summary.json").read_text()) == summary
    assert summary["suite"] == "gifi" and summary["headline"]["overall"] == summary["gifi"]["mean"]


def test_summary_is_consistent_with_per_run_values(tiny_run):
    out, summary = tiny_run
    for dim in ("GDR", "SN", "NTS", "CF", "PE"):
        entry = summary["dimensions"][dim]
        assert entry["computed"], (dim, entry.get("reason"))
        assert entry["mean"] == pytest.approx(np.mean(entry["runs"]))
        assert entry["sd"] == pytest.approx(np.std(entry["runs"], ddof=1))
        assert 0.0 <= entry["mean"] <= 1.0 and entry["n_templates"] >= 1
        assert entry["ci"][0] <= entry["ci"][1] and entry["se"] is not None
    computed = summary["gifi"]["dimensions"]
    assert summary["gifi"]["n_dimensions"] == len(computed) >= 5
    assert summary["gifi"]["mean"] == pytest.approx(np.mean([summary["dimensions"][d]["mean"] for d in computed]))
    assert "English-trained" in summary["meta"]["notes"][0]
    assert summary["meta"]["decoding"]["top_p"] == 0.95
    assert "GIFI =" in (out / "summary.md").read_text()
    assert "Refusals left out of SN, NTS and CF" in (out / "summary.md").read_text()


def test_fig4_distributions_recomputed_from_the_generations(tiny_run):
    """Sec. 5, Fig. 4 (issue 50): the distributions of (a) sentiment, (b) toxicity of the counterfactual
    continuations and (c) the cosine similarity of every two outputs of one template, refusals left out,
    recomputed here from generations.jsonl; their histograms are drawn beside the radar."""
    out, summary = tiny_run
    rows = [json.loads(line) for line in (out / "generations.jsonl").read_text().splitlines()]
    kept = [r for r in rows if r["task"] == "counterfactual" and not r["refusal"]]
    similarities = []
    for run in (0, 1):
        by_template = {}
        for r in kept:
            if r["run"] == run:
                by_template.setdefault(r["template_id"], []).append(np.asarray(r["embedding"]))
        similarities += [float(a @ b) for vectors in by_template.values()
                         for i, a in enumerate(vectors) for b in vectors[i + 1:]]
    found = summary["distributions"]
    for name, values in (("sentiment", [r["sentiment"] for r in kept]), ("toxicity", [r["toxicity"] for r in kept]),
                         ("similarity", similarities)):
        assert found[name]["n"] == len(values) and found[name]["mean"] == pytest.approx(np.mean(values))
        assert found[name]["quantiles"]["median"] == pytest.approx(np.median(values))
        assert sum(found[name]["histogram"]["counts"]) == len(values)
    assert found["toxicity"]["histogram"]["edges"][0] == 0.0 and found["sentiment"]["histogram"]["edges"][0] == -1.0
    assert "Fig. 4" in (out / "summary.md").read_text()
    from PIL import Image

    with Image.open(out / "summary.png") as image:
        assert image.size[0] > 1000  # the radar and three histogram panels


def test_too_long_prompts_are_refused(tiny_gpt2, tmp_path):
    config = GifiConfig(groups=("er", "sie"), dimensions=("PE",), sample=1, max_new_tokens=8)
    with pytest.raises(QueerbiasError, match="at most 128 tokens"):
        run_to_dir(GifiSuite(), str(tiny_gpt2), None, tmp_path, config, progress=False)


def test_missing_classifiers_are_reported_not_faked(tiny_gpt2, tmp_path):
    config = GifiConfig(groups=("er", "xier"), dimensions=("SN", "NTS", "GDR"), sample=1, max_new_tokens=4,
                        sentiment_model=None, toxicity_model=str(tmp_path / "absent"), n_resamples=50)
    summary = run_to_dir(GifiSuite(), str(tiny_gpt2), None, tmp_path / "out", config, progress=False)
    assert summary["dimensions"]["SN"] == {**summary["dimensions"]["SN"], "computed": False,
                                           "reason": "no sentiment model configured"}
    assert "cannot load" in summary["dimensions"]["NTS"]["reason"]
    assert summary["dimensions"]["CF"]["reason"] == "not requested"
    assert summary["gifi"]["dimensions"] == ["GDR"] and summary["gifi"]["n_dimensions"] == 1
    rows = [json.loads(line) for line in (tmp_path / "out" / "generations.jsonl").read_text().splitlines()]
    assert not any(r["sentiment"] is not None for r in rows)


def test_no_computed_dimension_is_refused(tiny_gpt2, tmp_path):
    config = GifiConfig(groups=("er", "xier"), dimensions=("SN",), sample=1, max_new_tokens=4, sentiment_model=None)
    with pytest.raises(QueerbiasError, match="no dimension could be computed.*SN: no sentiment model"):
        run_to_dir(GifiSuite(), str(tiny_gpt2), None, tmp_path, config, progress=False)
    assert not (tmp_path / "summary.json").exists()


def test_cli_compare_of_a_run_with_itself(tiny_run, tmp_path, capsys):
    out, _ = tiny_run
    assert main(["gifi", "compare", f"before={out}", f"after={out}", "--out", str(tmp_path / "cmp"),
                 "--resamples", "50"]) == 0
    document = json.loads((tmp_path / "cmp" / "delta.json").read_text())
    overall = document["comparisons"][0]["overall"]
    assert document["suite"] == "gifi" and overall["delta_score"] == 0.0 and overall["p_score"] == 1.0
    for name in ("delta.md", "delta.csv", "delta.tex", "forest.png"):
        assert (tmp_path / "cmp" / name).is_file()
    assert "| Dimension |" in capsys.readouterr().out


def _gdr_run(path, correct: dict[str, list[bool]], checksum="abc", groups=("er", "sie")):
    """A GDR-only run from hand-made rows: correct[group][template] per template."""
    rows = [{"run": 0, "seed": 0, "task": "gdr", "item_id": f"gdr-{t}:{g}", "template_id": f"gdr-{t}", "group": g,
             "name": "Kim", "sample": 0, "prompt": f"prompt {t} {g}", "generation": "…", "correct": flags[t],
             "detected": g if flags[t] else None}
            for g, flags in correct.items() for t in range(len(flags))]
    settings = GifiConfig(groups=groups, dimensions=("GDR",), n_resamples=50)
    meta = {"model": {"spec": path.name}, "settings": to_dict(settings),
            "data": {"name": "gifi-de", "checksum": checksum}, "decoding": {}, "notes": []}
    suite = GifiSuite()
    path.mkdir(parents=True)
    write_run(suite, summarise_rows(suite, rows, settings, meta), path)
    return load_run(path)


def test_compare_deltas_by_hand(tmp_path):
    # before: er 2/2, sie 1/2 -> mean .75, population SD .25, GDR = 1/(1 + 1/3) = .75; after: 1.0
    before = _gdr_run(tmp_path / "before", {"er": [True, True], "sie": [True, False]})
    after = _gdr_run(tmp_path / "after", {"er": [True, True], "sie": [True, True]})
    assert before.summary["dimensions"]["GDR"]["mean"] == pytest.approx(0.75)
    entry = compare_runs(before, [after], CompareOptions(resamples=300))["comparisons"][0]
    gdr = entry["dimensions"]["GDR"]
    assert (gdr["score_before"], gdr["score_after"]) == pytest.approx((0.75, 1.0))
    assert gdr["delta_score"] == pytest.approx(0.25) and entry["overall"]["delta_score"] == pytest.approx(0.25)
    assert gdr["ci_score"][0] <= gdr["ci_score"][1] and 0 <= gdr["p_score"] <= 1


def test_compare_has_app_d_recomputed_from_the_items(tmp_path):
    """App. D in compare (Fig. D.8): each run's outcome shares from its rows, and their change."""
    before = _gdr_run(tmp_path / "before", {"er": [True, True], "sie": [True, False]})
    after = _gdr_run(tmp_path / "after", {"er": [True, False], "sie": [True, True]})
    document = compare_runs(before, [after], CompareOptions(resamples=50))
    outcomes = document["comparisons"][0]["app_d"]["gdr_outcomes"]
    for group in ("er", "sie"):
        shares = [float(np.mean([r["detected"] == group for r in run.rows().to_dict("records")
                                 if r["group"] == group])) for run in (before, after)]
        assert outcomes["groups"][group]["correct"] == pytest.approx(
            {"before": shares[0], "after": shares[1], "delta": shares[1] - shares[0]})
    assert outcomes["overall"]["omission"] == pytest.approx({"before": 0.25, "after": 0.25, "delta": 0.0})
    assert document["comparisons"][0]["app_d"]["accuracy_variance"] == {"before": None, "after": None}  # one run
    from queerbias.comparison.delta_tables import render_delta_tables

    assert "App. D, before → after" in render_delta_tables(document)["md"]


def test_compare_refuses_different_prompts_or_groups(tmp_path):
    base = _gdr_run(tmp_path / "a", {"er": [True], "sie": [False]})
    with pytest.raises(QueerbiasError, match="data checksum differs"):
        compare_runs(base, [_gdr_run(tmp_path / "b", {"er": [True], "sie": [False]}, checksum="x")])
    other = _gdr_run(tmp_path / "c", {"er": [True], "xier": [False]}, groups=("er", "xier"))
    with pytest.raises(QueerbiasError, match="setting groups differs"):
        compare_runs(base, [other])
