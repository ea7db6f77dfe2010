"""The options of a comparison are declared once (`report.options.CompareOptions`): the CLI, a
training config's `compare` section and the Python API refuse the same values, by the same limits."""

from __future__ import annotations

import pytest

import queerbias as qb
from queerbias.cli import main
from queerbias.errors import QueerbiasError
from queerbias.report.options import MAX_RESAMPLES
from queerbias.train.config import config_from_dict

REFUSED = [
    ("resamples", 0, "must be between 1 and 1,000,000, got 0"),
    ("resamples", MAX_RESAMPLES + 1, "must be between 1 and 1,000,000, got 1,000,001"),
    ("seed", -1, "must be between 0 and 4,294,967,295, got -1"),
    ("ppl_margin", -0.5, "must be at least 0, got -0.5"),
    ("soft_test", "sign", "must be one of wilcoxon, ttest, got 'sign'"),
    ("correction", "bonferroni", "must be one of holm, bh, got 'bonferroni'"),
]


@pytest.mark.parametrize(("key", "value", "message"), REFUSED)
def test_cli_yaml_and_api_refuse_the_same_values(key, value, message, tmp_path, capsys):
    flag = "--" + key.replace("_", "-")
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "d"),
                 flag, str(value)]) == 2
    assert f"{flag} {message}" in capsys.readouterr().err
    with pytest.raises(QueerbiasError, match=f"config key 'compare.{key}' {message}".replace("(", r"\(")):
        config_from_dict({"model": "m", "data": {"train": "c"}, "compare": {key: value}})
    with pytest.raises(QueerbiasError, match=f"compare.{key} {message}"):
        qb.compare(tmp_path / "a", tmp_path / "b", **{key: value})  # refused before any run is read


def test_the_largest_resamples_pass_everywhere():
    """The upper limit itself is allowed by each (the options are checked before any run is read)."""
    config = config_from_dict({"model": "m", "data": {"train": "c"}, "compare": {"resamples": MAX_RESAMPLES}})
    assert config.compare.resamples == MAX_RESAMPLES
    with pytest.raises(QueerbiasError, match="no-such-run-a: no such run folder"):
        qb.compare("no-such-run-a", "no-such-run-b", resamples=MAX_RESAMPLES)
