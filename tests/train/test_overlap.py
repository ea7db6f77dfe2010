"""The overlap guard knows the sets made for judging: no run trains on queerbias-de-shapes' frames,
whether or not it evaluates them, and no override admits them."""

from __future__ import annotations

import pytest

from queerbias.errors import QueerbiasError
from queerbias.pairs.resolve import load_pairs
from queerbias.pairs.schema import PairSet
from queerbias.train import benchmarks
from queerbias.train.config import config_from_dict
from queerbias.train.overlap import check_overlap

from .helpers import small_config


def _config(tmp_path, **overrides):
    return config_from_dict(small_config("m", tmp_path / "run", objective="equalise", pairs__train="queerbias-de:train",
                                         eval__benchmarks=[{"suite": "pairs", "data": "queerbias-de:test",
                                                            "sample": 4}], **overrides))


@pytest.mark.parametrize("part", ["validation", "test"])
def test_training_pairs_from_the_judged_family_are_refused_without_override(tmp_path, part):
    config = _config(tmp_path, pairs__allow_overlap=True)
    data = benchmarks.load_data(config)
    leaked = load_pairs(f"queerbias-de-shapes:{part}").pairs[:3]
    pairs = PairSet("mine", [*load_pairs("queerbias-de:train").pairs[:5], *leaked])
    with pytest.raises(QueerbiasError, match="share 6 sentences with queerbias-de-shapes.*no override"):
        check_overlap(config, data, pairs, None, lowercase=False)
    corpus = ["Ein Satz über etwas anderes. " + leaked[0].sent_less]
    with pytest.raises(QueerbiasError, match="training corpus.*share 1 sentences with queerbias-de-shapes"):
        check_overlap(config, data, None, corpus, lowercase=False)
    clean = check_overlap(_config(tmp_path), data, load_pairs("queerbias-de:train"), ["Nichts davon."], False)
    assert clean["held_out"]["shared_sentences"] == {"bias": 0}


def test_a_test_split_cannot_guard_a_run(tmp_path):
    bench = [{"suite": "pairs", "data": "queerbias-de-shapes:test", "sample": 4, "guard": 0.0}]
    with pytest.raises(QueerbiasError, match="guard.*test split: it is judged on, never selected on"):
        config_from_dict(small_config("m", tmp_path / "run", eval__benchmarks=bench))
    bench[0]["data"] = "queerbias-de-shapes:validation"
    assert config_from_dict(small_config("m", tmp_path / "run", eval__benchmarks=bench)).eval.benchmarks[0].guard == 0
