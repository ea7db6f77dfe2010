"""eval.base_from: the runs of one model score its base once (train/shared_base.py)."""

from __future__ import annotations

import json

import pytest

from queerbias.errors import QueerbiasError
from queerbias.train.config import config_from_dict
from queerbias.train.runner import run_training

from .helpers import small_config


def _meta(folder) -> dict:
    return json.loads((folder / "summary.json").read_text())["meta"]


def test_the_second_run_adopts_the_first_runs_base_and_keeps_its_own_meta(tiny_gpt2, tmp_path):
    shared = tmp_path / "shared"
    first, second = tmp_path / "first", tmp_path / "second"
    for out, seed in ((first, 0), (second, 1)):
        run_training(config_from_dict(small_config(tiny_gpt2, out, seed=seed, max_steps=1, eval_every=1,
                                                   eval__base_from=str(shared), eval__general_perplexity=False)))
    published, scored, adopted = _meta(shared / "bias"), _meta(first / "base/bias"), _meta(second / "base/bias")
    assert published["scored_in"] == str(first) and not {"run", "step", "perplexity"} & set(published)
    assert "shared_base" not in scored
    assert adopted["shared_base"] == {"from": str(shared / "bias"), "scored_in": str(first)}
    assert adopted["run_key"] == scored["run_key"] and adopted["run"] == str(second)
    assert adopted["model"]["spec"] == str(second / "base") and adopted["perplexity"] is not None
    assert (second / "base/bias/pairs.csv").read_bytes() == (first / "base/bias/pairs.csv").read_bytes()
    delta = json.loads((second / "compare/bias/delta.json").read_text())
    assert delta["comparisons"][-1]["before"]["path"] == str(second / "base/bias")

    other = small_config(tiny_gpt2, tmp_path / "third", max_steps=1, eval_every=1, eval__base_from=str(shared),
                         eval__benchmarks=[{"suite": "pairs", "data": "queerbias-de", "sample": 12}])
    with pytest.raises(QueerbiasError, match=r"holds a base evaluation of another data \(checksum\), settings "
                                             r"\(settings id\) than this run's"):
        run_training(config_from_dict(other))


def test_an_xlm_run_adopts_the_base_of_its_kind_and_language_only(tiny_xlm, tmp_path):
    """The store keys an XLM's evaluation by its language and kind too (`provenance.model_use`); the shared
    base's expected key is the store's own (`store.keyed_run`), so the second run of the model adopts the
    first's base (issue 46: every XLM cell after the first was refused) and a run of the other kind is
    refused, naming what differs."""
    shared = tmp_path / "shared"
    pairs = [{"suite": "pairs", "data": "queerbias-de", "sample": 8}]

    def config(out: str, **changes):
        return config_from_dict(small_config(tiny_xlm, tmp_path / out, max_steps=1, eval_every=1, lang="de",
                                             eval__base_from=str(shared), eval__general_perplexity=False,
                                             eval__benchmarks=pairs, **changes))

    for out, seed in (("first", 0), ("second", 1)):
        run_training(config(out, seed=seed, kind="causal"))
    assert _meta(tmp_path / "second/base/bias")["shared_base"]["scored_in"] == str(tmp_path / "first")
    assert _meta(tmp_path / "second/base/bias")["model"]["lang"] == "de"
    with pytest.raises(QueerbiasError, match=r"holds a base evaluation of another language and kind than this "
                                             r"run's; point eval.base_from elsewhere"):
        run_training(config("masked", kind="masked"))
