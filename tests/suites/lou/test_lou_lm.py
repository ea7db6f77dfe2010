"""LM view end to end on tiny models: item rows, exclusions, pooling, outputs, reuse."""

import csv
import json

import pytest
import torch

from queerbias.errors import QueerbiasError
from queerbias.models import load_model
from queerbias.suites.lou.declaration import LouSettings
from queerbias.suites.lou.suite import LouLMSuite
from queerbias.suites.store import run_to_dir

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run_lou(model, data, out, *, tasks=(), n=None, n_resamples=10_000, overwrite=False):
    settings = LouSettings(tasks=tuple(tasks), sample=n, n_resamples=n_resamples)
    return run_to_dir(LouLMSuite(), model, str(data), out, settings, overwrite=overwrite)


def _items(out):
    with open(out / "items.csv", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("family", ["tiny_gpt2", "tiny_llama", "tiny_bert"])
def test_run_writes_contract(family, request, lou_dir, tmp_path):
    out = tmp_path / "out"
    summary = run_lou(str(request.getfixturevalue(family)), lou_dir, out, n_resamples=200)
    assert sorted(p.name for p in out.iterdir()) == ["items.csv", "summary.json", "summary.md", "summary.png"]
    assert (out / "summary.png").read_bytes()[:8] == PNG_MAGIC
    assert json.loads((out / "summary.json").read_text()) == summary
    meta = summary["meta"]
    assert summary["suite"] == "lou" and meta["model"]["fingerprint"].startswith("sha256:")
    assert [t["task"] for t in meta["data"]["tasks"]] == ["x-stance-de", "germeval-toxic"]
    for task in ("x-stance-de", "germeval-toxic"):
        for strategy, entry in summary["tasks"][task].items():
            # the weather sentence has no person noun: identical, counted, not compared
            assert (entry["n"], entry["n_identical"], entry["n_compared"]) == (6, 1, 5), strategy
    rows = _items(out)
    assert len(rows) == 2 * 6 * 6
    for row in rows:
        if row["identical"] == "True":
            assert row["delta"] == "" and row["preferred"] == "" and row["delta_sum"] == ""
        else:
            delta = float(row["score_reformulated"]) - float(row["score_original"])
            assert float(row["delta"]) == pytest.approx(delta)
            assert row["preferred"] == str(delta > 0)
            summed = float(row["score_reformulated_sum"]) - float(row["score_original_sum"])
            assert float(row["delta_sum"]) == pytest.approx(summed)
    # both fixture tasks hold the same texts: the pooled row counts each text pair once
    assert summary["all"]["GenderStern"]["n"] == 6
    stern = [float(r["delta"]) for r in rows if r["strategy"] == "GenderStern" and r["task"] == "x-stance-de"
             and r["delta"]]
    assert summary["all"]["GenderStern"]["mean_delta"] == pytest.approx(sum(stern) / len(stern))
    halves = [100.0 if d > 0 else 50.0 if d == 0 else 0.0 for d in stern]  # a tie counts half
    assert summary["all"]["GenderStern"]["preference"] == pytest.approx(sum(halves) / len(halves))
    summed = [float(r["delta_sum"]) for r in rows if r["strategy"] == "GenderStern" and r["task"] == "x-stance-de"
              and r["delta_sum"]]
    assert summary["all"]["GenderStern"]["sentence"]["mean_delta"] == pytest.approx(sum(summed) / len(summed))


def test_causal_delta_is_mean_token_logprob_given_bos(tiny_gpt2, lou_dir, tmp_path):
    """Independent of the scorer: one forward pass of the raw model."""
    run_lou(str(tiny_gpt2), lou_dir, tmp_path / "out", tasks=["x-stance-de"], n_resamples=100)
    row = next(r for r in _items(tmp_path / "out") if r["index"] == "0" and r["strategy"] == "GenderStern")
    lm = load_model(str(tiny_gpt2))

    def token_logprobs(text):
        ids = lm.tokenizer(lm.tokenizer.bos_token + text, add_special_tokens=False, return_tensors="pt").input_ids
        with torch.no_grad():
            logprobs = torch.log_softmax(lm.model(ids).logits[0, :-1].float(), dim=-1)
        return logprobs[torch.arange(ids.shape[1] - 1), ids[0, 1:]]

    stern, plain = token_logprobs("Die Lehrer*innen haben gestreikt."), token_logprobs("Die Lehrer haben gestreikt.")
    assert float(row["delta"]) == pytest.approx((stern.mean() - plain.mean()).item(), abs=1e-5)
    assert float(row["delta_sum"]) == pytest.approx((stern.sum() - plain.sum()).item(), abs=1e-4)


def test_too_long_texts_are_counted_not_truncated(tiny_llama, lou_dir, tmp_path):
    path = lou_dir / "lou" / "x-stance-de.jsonl"
    record = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    record["GenderStern"] = " ".join([record["GenderStern"]] * 40)  # far beyond 128 positions
    path.write_text(path.read_text(encoding="utf-8") + json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    summary = run_lou(str(tiny_llama), lou_dir, tmp_path / "out", tasks=["x-stance-de"], n_resamples=100)
    assert summary["meta"]["position_limit"] == 128
    stern, gap = summary["tasks"]["x-stance-de"]["GenderStern"], summary["tasks"]["x-stance-de"]["GenderGap"]
    assert (stern["n"], stern["n_too_long"], stern["n_compared"]) == (7, 1, 5)
    assert (gap["n_too_long"], gap["n_compared"]) == (0, 6)


def test_finished_run_is_reused_and_never_silently_replaced(tiny_gpt2, lou_dir, tmp_path):
    out = tmp_path / "out"
    first = run_lou(str(tiny_gpt2), lou_dir, out, tasks=["x-stance-de"], n_resamples=100)
    assert run_lou(str(tiny_gpt2), lou_dir, out, tasks=["x-stance-de"], n_resamples=100) == first
    with pytest.raises(QueerbiasError, match="--overwrite"):
        run_lou(str(tiny_gpt2), lou_dir, out, tasks=["x-stance-de"], n=3, n_resamples=100)
    again = run_lou(str(tiny_gpt2), lou_dir, out, tasks=["x-stance-de"], n=3, n_resamples=100, overwrite=True)
    assert again["tasks"]["x-stance-de"]["Neutral"]["n"] == 3


def test_shared_sample(tiny_llama, shared_data, tmp_path):
    folder = shared_data / "lou"
    if not folder.is_dir():
        pytest.skip("no Lou copy in the shared data")
    summary = run_lou(str(tiny_llama), folder, tmp_path / "out", tasks=["x-stance-de", "germeval-toxic"], n=8,
                      n_resamples=100)
    for task in ("x-stance-de", "germeval-toxic"):
        for entry in summary["tasks"][task].values():
            assert entry["n"] == 8 and entry["n_identical"] + entry["n_too_long"] + entry["n_compared"] == 8


@pytest.mark.slow
def test_embedded_gemma_on_shared_data(shared_data, tmp_path):
    """Gemma 3 270M on the 12 shortest X-Stance instances (copied to tmp_path only), to stay near a minute."""
    source = shared_data / "lou" / "lou" / "x-stance-de.jsonl"
    if not source.is_file():
        pytest.skip("no Lou copy in the shared data")
    lines = sorted(source.read_text(encoding="utf-8").splitlines(), key=lambda line: len(json.loads(line)["original"]))
    (tmp_path / "data" / "lou").mkdir(parents=True)
    (tmp_path / "data" / "lou" / "x-stance-de.jsonl").write_text("\n".join(lines[:12]) + "\n", encoding="utf-8")
    summary = run_lou("embedded:gemma-3-270m", tmp_path / "data", tmp_path / "out", n_resamples=500)
    entries = summary["tasks"]["x-stance-de"]
    assert all(e["n_too_long"] == 0 and e["n_compared"] + e["n_identical"] == 12 for e in entries.values())
    for entry in entries.values():
        if entry["n_compared"]:
            assert entry["ci_delta"][0] <= entry["mean_delta"] <= entry["ci_delta"][1]
            assert 0 <= entry["preference"] <= 100
    # Gemma's scores are real numbers, not the all-zero scores of a model that sees only [UNK]
    assert len({round(e["mean_delta"], 6) for e in entries.values() if e["n_compared"]}) > 1
