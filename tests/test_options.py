"""The one typed options loader: strict numbers, ranges, choices, keys named by their source, aliases."""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass

import pytest

from queerbias.errors import QueerbiasError
from queerbias.options import (
    add_arguments,
    build,
    config_key,
    from_args,
    from_mapping,
    integer,
    number,
    option,
)


@dataclass(frozen=True)
class Example:
    sample: int | None = option(None, "a subset", ge=1)
    seed: int = option(0, "a seed", ge=0)
    rate: float = option(0.5, "a rate", gt=0, lt=1)
    mode: str = option("a", "a mode", choices=("a", "b"))
    tags: tuple[str, ...] = option((), "tags", choices=("x", "y"))


@pytest.mark.parametrize("text", ["--5", "²", "٣", "1e3", " ", "5.0", "0x10", "1_000"])
def test_integers_are_ascii_digits_with_one_sign(text):
    with pytest.raises(ValueError):
        integer(text)


@pytest.mark.parametrize("text", ["nan", "inf", "-Infinity", "1e", "½", "٣"])
def test_numbers_are_finite_decimals(text):
    with pytest.raises(ValueError):
        number(text)


def test_good_values_are_read_from_text():
    assert (integer("+7"), integer("-3"), number("2e-5"), number(".5")) == (7, -3, 2e-5, 0.5)
    assert from_mapping(Example, {"sample": "4", "rate": "0.25", "tags": "x,y"}, "api") == \
        Example(sample=4, rate=0.25, tags=("x", "y"))


@pytest.mark.parametrize(("values", "message"), [
    ({"sample": 0}, "api.sample must be at least 1, got 0"),
    ({"seed": -1}, "api.seed must be at least 0, got -1"),
    ({"rate": 1.0}, "api.rate must be between 0 and 1 (exclusive), got 1"),
    ({"rate": float("nan")}, "api.rate must be a (finite) number, got nan"),
    ({"rate": True}, "api.rate must be a (finite) number, got True"),
    ({"mode": "c"}, "api.mode must be one of a, b, got 'c'"),
    ({"tags": ["x", "z"]}, r"api.tags\[1\] must be one of x, y, got 'z'"),
    ({"sede": 1}, r"api.sede is unknown; did you mean 'seed'\? (known: sample, seed, rate, mode, tags)"),
    ({"zzz": 1}, "api.zzz is unknown; known: sample, seed, rate, mode, tags"),
])
def test_a_bad_value_is_named_by_its_key(values, message):
    with pytest.raises(QueerbiasError, match=message.replace("(", r"\(").replace(")", r"\)")):
        from_mapping(Example, values, "api")


def test_config_keys_are_named_as_the_config_names_them():
    with pytest.raises(QueerbiasError, match="config key 'seed' must be an integer, got '--5'"):
        build(Example, {"seed": "--5"}, config_key)


def test_a_deprecated_alias_still_works_and_says_so(caplog):
    parser = argparse.ArgumentParser()
    add_arguments(parser, Example, aliases={"sample": ("--n",)})
    assert "--n: deprecated alias" in parser.format_help()
    with caplog.at_level(logging.WARNING):
        args = parser.parse_args(["--n", "3", "--tags", "x", "--tags", "y"])
    assert from_args(Example, args) == Example(sample=3, tags=("x", "y"))
    assert "--n is deprecated and will be removed; use --sample" in caplog.text
