"""Typed options: declared once on a dataclass, read from YAML, overrides, the API or a command line.

A field says everything about itself in `option(default, help, choices=, role=, ge=, gt=,
le=, lt=, check=)`: its type is the annotation, its range and allowed values are checked
wherever a value comes from, its help text becomes the `--flag` help, and its role says
what it changes ("items": what is scored or how, so two runs that differ in it cannot be
compared; "summary": only the summary, e.g. bootstrap resamples; "execution": neither,
e.g. batch size). `build` makes the dataclass (nested sections and lists of them too)
from a mapping, `from_args` from parsed command-line flags; every error is one
`QueerbiasError` naming the value the way its source names it (`config key
'lora.alpha'`, `--sample`, `score.sample`).

Values are parsed strictly: an integer is ASCII digits with at most one sign (not
`--5`, `²` or `٣`, which `int()` or `str.isdigit()` would take), a number is finite
(never NaN or infinite), a flag is true or false. Suite settings, training configs and
the CLI all go through this one module; module imports stay light (the CLI builds its
parser from it).
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import hashlib
import json
import logging
import math
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import MISSING, field, fields
from typing import Any, Literal

from queerbias.bounds import MAX_DIGITS, BoundError, bounded_int
from queerbias.errors import QueerbiasError
from queerbias.yamlio import load_yaml

log = logging.getLogger(__name__)

ITEMS, SUMMARY, EXECUTION = "items", "summary", "execution"
#: the largest seed: numpy's legacy generators (and so scipy and transformers' `set_seed`) take 32 bits
MAX_SEED = 2**32 - 1
#: the largest integer any option takes: what torch and numpy hold in an int64
MAX_INTEGER = 2**63 - 1
_INTEGER = re.compile(r"[+-]?[0-9]+\Z")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
#: how an error names a value: the dotted key -> e.g. "config key 'lora.alpha'"
Namer = Callable[[str], str]


def option(default: Any = MISSING, help: str = "", *, choices=None, role: str = ITEMS, ge=None, gt=None,
           le=None, lt=None, check: Callable[[Any], str | None] | None = None, factory=MISSING):
    """A dataclass field with its help, allowed values (a tuple, or a function returning one, for
    choices known only when asked, such as the registered suites), role and range; `check(value)`
    returns what is wrong with a value beyond those (or None). `factory` builds a mutable default."""
    if isinstance(default, (list, dict, set)):
        raise TypeError("a list or mapping default needs factory=")
    metadata = {"help": help, "choices": choices, "role": role, "ge": ge, "gt": gt, "le": le, "lt": lt,
                "check": check}
    return field(default=default, default_factory=factory, metadata=metadata)


def seed_option(help: str, default: int = 0):
    """A seed: 0 to `MAX_SEED`, so that every library it reaches takes it."""
    return option(default, help, ge=0, le=MAX_SEED)


def section(cls, help: str = ""):
    """A nested section of options (a dataclass), defaulting to its own defaults."""
    return option(help=help, factory=cls)


def role(f: dataclasses.Field) -> str:
    return f.metadata.get("role", ITEMS)


def flag(name: str) -> str:
    """The command-line flag of a field: `--chunk-pairs` for chunk_pairs."""
    return "--" + name.replace("_", "-")


def config_key(dotted: str) -> str:
    return f"config key '{dotted}'" if dotted else "the config"


def dotted(where: str) -> Namer:
    """Names keys below `where`: `where.key` (`score.sample`, `eval.benchmarks[0].options.runs`)."""
    return lambda key: key if not where else f"{where}.{key}" if key else where


def auto_or_count(value) -> str | None:
    """A check for batch sizes: "auto" or a positive integer."""
    text = str(value)
    if text == "auto" or (_INTEGER.match(text) and int(text) >= 1):
        return None
    return f"must be auto or a positive integer, got {value!r}"


def positive_nats(value) -> str | None:
    """A check for margins in nats: positive and finite (NaN or infinity would count every pair)."""
    if isinstance(value, (int, float)) and 0 < value < math.inf:
        return None
    return f"must be a positive number of nats, got {value!r}"


def count_or_auto(value) -> int | str:
    """A checked batch size as the scorers take it: "auto" or an int."""
    return "auto" if str(value) == "auto" else integer(str(value))


# -- parsing text -------------------------------------------------------------------

def integer(text: str) -> int:
    """An integer written in ASCII digits with at most one sign; anything else is refused, and so
    is one of more than `bounds.MAX_DIGITS` digits (a `BoundError`), before `int()` reads it."""
    if not isinstance(text, str) or not _INTEGER.match(text.strip()):
        raise ValueError(f"not an integer: {text!r}")
    return bounded_int(text.strip())


def number(text: str) -> float:
    """A finite decimal number (`2e-5`, `.5`); NaN, infinity and other spellings are refused."""
    if not isinstance(text, str) or not _NUMBER.match(text.strip()):
        raise ValueError(f"not a finite number: {text!r}")
    return float(text.strip())


def cli_type(parse: Callable[[str], float], what: str, minimum: float | None = None,
             maximum: float | None = None):
    """An argparse `type=` that reads a flag with `parse` (`integer`, `number`) and refuses values
    below `minimum` or above `maximum`; `what` names the kind in the error ("an integer")."""
    def converted(text: str):
        try:
            value = parse(text)
        except BoundError as err:
            raise argparse.ArgumentTypeError(f"must be {what}, got {err}") from None
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if minimum is not None and value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {_shown(minimum)}, got {_shown(value)}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {_shown(maximum)}, got {_shown(value)}")
        return value
    return converted


# -- building -----------------------------------------------------------------------

def build(cls, values, name: Namer = config_key, prefix: str = ""):
    """`cls` from a mapping: unknown keys refused, every value converted and checked, nested
    sections built in turn; errors name the key through `name`."""
    if not isinstance(values, Mapping):
        raise QueerbiasError(f"{name(prefix.rstrip('.'))} must be a mapping, got {type(values).__name__}")
    hints = typing.get_type_hints(cls)
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(values) - set(known), key=str)
    if unknown:
        raise QueerbiasError(f"{name(prefix + str(unknown[0]))} is unknown; {suggestion(unknown[0], known)}")
    converted = {key: value_of(values[key], hints[key], known[key], name, prefix + key) for key in values}
    return cls(**converted)


def suggestion(key, known) -> str:
    """What an error about an unknown key adds: the closest known key, if one is close, and the known keys."""
    close = difflib.get_close_matches(str(key), [str(k) for k in known], n=1)
    listed = ", ".join(map(str, known))
    return f"did you mean '{close[0]}'? (known: {listed})" if close else f"known: {listed}"


def from_mapping(cls, values, where: str):
    """Settings from a mapping (YAML, JSON, keyword arguments); each error names `where.key`."""
    return build(cls, values, dotted(where))


def value_of(value, tp, f: dataclasses.Field | None, name: Namer, key: str):
    """One value as type `tp`, within the field's range and choices."""
    value = coerce(value, tp, name, key)
    if f is not None:
        check_value(value, f, name(key))
    return value


def coerce(value, tp, name: Namer, key: str):
    """`value` as type `tp`: int, float, str, bool, Literal, X | None, a union, list[...] or
    tuple[..., ...] (a string: comma-separated items), dict, or a dataclass section."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        if len(options) == 1:
            return coerce(value, options[0], name, key)
        for candidate in options:
            try:
                return coerce(value, candidate, name, key)
            except QueerbiasError:
                continue
        kinds = " or ".join(getattr(a, "__name__", str(a)) for a in options)
        raise QueerbiasError(f"{name(key)}: {value!r} is not a valid {kinds}")
    if origin is Literal:
        return _one_of(value, args, name(key))
    if origin in (list, tuple):
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)):
            raise QueerbiasError(f"{name(key)} must be a list, got {value!r}")
        items = [part for item in items for part in (item.split(",") if isinstance(item, str) else [item])]
        converted = [coerce(item, args[0], name, f"{key}[{i}]") for i, item in enumerate(items)]
        return tuple(converted) if origin is tuple else converted
    if dataclasses.is_dataclass(tp):
        return build(tp, {} if value is None else value, name, key + ".")
    if tp is dict:
        if not isinstance(value, dict):
            raise QueerbiasError(f"{name(key)} must be a mapping, got {value!r}")
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise QueerbiasError(f"{name(key)} must be true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, str):
            try:
                value = integer(value)
            except BoundError as err:
                raise QueerbiasError(f"{name(key)} must be an integer of 64 bits, got {err}") from None
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, int):
            raise QueerbiasError(f"{name(key)} must be an integer, got {value!r}")
        if abs(value) > MAX_INTEGER:
            raise QueerbiasError(f"{name(key)} must be at most {MAX_INTEGER} in size (a 64-bit integer), got "
                                 f"{_shown(value)}")
        return value
    if tp is float:
        if isinstance(value, str):  # a command line, or YAML 1.1, which reads `2e-5` as text
            try:
                value = number(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise QueerbiasError(f"{name(key)} must be a (finite) number, got {value!r}")
        return float(value)
    if tp is str:
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)  # a number where text may also be a word: batch_size 8 or "auto"
        if not isinstance(value, str):
            raise QueerbiasError(f"{name(key)} must be a string, got {value!r}")
        return value
    raise TypeError(f"unsupported option type {tp} for {key}")


def check_value(value, f: dataclasses.Field, label: str) -> None:
    """The field's choices, range and own check, on a converted value (None passes: it means "not set")."""
    if value is None:
        return
    meta, choices = f.metadata, choices_of(f)
    if choices is not None:
        listed = isinstance(value, (list, tuple))
        for index, item in enumerate(value if listed else (value,)):
            _one_of(item, choices, f"{label}[{index}]" if listed else label)
    if isinstance(value, float) and not math.isfinite(value):
        raise QueerbiasError(f"{label} must be a (finite) number, got {value}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        problem = _out_of_range(value, meta)
        if problem:
            raise QueerbiasError(f"{label} must be {problem}, got {_shown(value)}")
    problem = meta["check"](value) if meta.get("check") else None
    if problem:
        raise QueerbiasError(f"{label} {problem}")


def validate(instance, name: Namer = flag) -> None:
    """Check every field of a built instance (for `__post_init__`: settings made directly in Python)."""
    for f in fields(instance):
        check_value(getattr(instance, f.name), f, name(f.name))


def choices_of(f: dataclasses.Field) -> tuple | None:
    choices = f.metadata.get("choices")
    return choices() if callable(choices) else choices


def _one_of(value, choices, label: str):
    if value not in choices:
        raise QueerbiasError(f"{label} must be one of {', '.join(map(str, choices))}, got {value!r}")
    return value


def _shown(value: float) -> str:
    """A number as an error shows it: integers in full with thousands separators (one too long to
    print, by its number of digits), others as %g."""
    if isinstance(value, int) and value.bit_length() > 3 * MAX_DIGITS:  # str() refuses 4,300 digits
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1:,} digits"
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def _out_of_range(value: float, meta: Mapping) -> str:
    ge, gt, le, lt = (meta.get(k) for k in ("ge", "gt", "le", "lt"))
    low_ok = (ge is None or value >= ge) and (gt is None or value > gt)
    high_ok = (le is None or value <= le) and (lt is None or value < lt)
    if low_ok and high_ok:
        return ""
    if (ge, gt) != (None, None) and (le, lt) != (None, None):
        low, high = ("[", ge) if ge is not None else ("(", gt), ("]", le) if le is not None else (")", lt)
        if low[0] + high[0] in ("[]", "()"):
            return f"between {_shown(low[1])} and {_shown(high[1])}" + (" (exclusive)" if low[0] == "(" else "")
        return f"in {low[0]}{_shown(low[1])}, {_shown(high[1])}{high[0]}"
    if ge is not None:
        return f"at least {_shown(ge)}"
    if gt is not None:
        return "positive" if gt == 0 else f"greater than {_shown(gt)}"
    return f"at most {_shown(le)}" if le is not None else f"less than {_shown(lt)}"


def apply_override(raw: dict, item: str) -> None:
    """`dotted.key=value` into a raw mapping (the value read as YAML: `lora.r=8`, `tasks=[a, b]`)."""
    key, sep, text = item.partition("=")
    if not sep or not key:
        raise QueerbiasError(f"override {item!r} is not of the form key=value")
    value = load_yaml(f"override {item!r}", text) if text else None
    node = raw
    parts = key.split(".")
    for depth, part in enumerate(parts[:-1]):
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise QueerbiasError(f"override {item!r}: config key '{'.'.join(parts[:depth + 1])}' is not a section")
        node = child
    node[parts[-1]] = value


# -- reading back -------------------------------------------------------------------

def to_dict(instance) -> dict:
    """Field values as JSON values (tuples as lists, sections as mappings)."""
    return {f.name: _jsonable(getattr(instance, f.name)) for f in fields(instance)}


def _jsonable(value):
    if dataclasses.is_dataclass(value):
        return to_dict(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def settings_id(settings) -> str:
    """Hash of every field that changes the results (items and summary roles)."""
    return hashlib.sha256(json.dumps(result_settings(settings), sort_keys=True).encode()).hexdigest()[:16]


def result_settings(settings) -> dict:
    """The fields that change the results (items and summary roles), as JSON values."""
    return {f.name: _jsonable(getattr(settings, f.name)) for f in fields(settings) if role(f) != EXECUTION}


def item_fields(settings_cls) -> list[str]:
    """Fields whose difference makes two runs incomparable."""
    return [f.name for f in fields(settings_cls) if role(f) == ITEMS]


def without_new_defaults(previous, current, defaults):
    """`current` without the keys `previous` lacks whose value is their option's default (nested
    sections and benchmark entries alike): an option that a later version added, at the default
    that keeps the earlier behaviour, changes no run or study cell made before it existed."""
    if isinstance(current, dict) and isinstance(previous, dict):
        known = defaults if isinstance(defaults, dict) else {}
        return {key: without_new_defaults(previous[key], value, known.get(key)) if key in previous else value
                for key, value in current.items()
                if key in previous or key not in known or value != known[key]}
    if isinstance(current, list) and isinstance(previous, list) and len(current) == len(previous):
        template = defaults[0] if isinstance(defaults, list) and defaults else None
        return [without_new_defaults(old, new, template) for old, new in zip(previous, current, strict=True)]
    return current


# -- command line -------------------------------------------------------------------

class _Value(argparse.Action):
    """Stores a flag's value (extends it for list fields); a deprecated alias still works, with a warning."""

    def __init__(self, option_strings, dest, listed: bool = False, **kwargs):
        super().__init__(option_strings, dest, nargs="+" if listed else None, **kwargs)
        self.listed = listed

    def __call__(self, parser, namespace, values, option_string=None):
        canonical = self.option_strings[0]
        if option_string != canonical:
            log.warning("%s is deprecated and will be removed; use %s", option_string, canonical)
        if self.listed:
            values = [*(getattr(namespace, self.dest, None) or []), *values]
        setattr(namespace, self.dest, values)


def add_arguments(parser, settings_cls, skip: tuple[str, ...] = (),
                  aliases: Mapping[str, tuple[str, ...]] | None = None) -> None:
    """One `--flag` per field (its help, choices and default); `aliases` keeps an alias command's
    historical flag names working (`sample: ("--n",)`), marked deprecated in --help."""
    hints = typing.get_type_hints(settings_cls)
    group = parser.add_argument_group("settings")
    for f in fields(settings_cls):
        if f.name in skip:
            continue
        old = tuple((aliases or {}).get(f.name, ()))
        default = f.default if f.default is not MISSING else None
        shown = ",".join(map(str, default)) if isinstance(default, tuple) else default
        choices = choices_of(f)
        text = f.metadata.get("help", "")
        details = f"default: {shown}" + (f"; one of {', '.join(map(str, choices))}" if choices else "")
        deprecated = f"; {', '.join(old)}: deprecated alias" if old else ""
        text = f"{text} ({details}{deprecated})" if text else f"{details}{deprecated}"
        tp = _plain(hints[f.name])
        if tp is bool:
            group.add_argument(flag(f.name), *old, dest=f.name, action=argparse.BooleanOptionalAction,
                               default=None, help=text)
        else:
            group.add_argument(flag(f.name), *old, dest=f.name, default=None, metavar=f.name.upper(), help=text,
                               action=_Value, listed=typing.get_origin(tp) in (list, tuple))


def from_args(settings_cls, args, base=None):
    """Settings with the flags given on the command line applied over `base` (default: the defaults)."""
    hints = typing.get_type_hints(settings_cls)
    base = base if base is not None else settings_cls()
    values = {f.name: getattr(base, f.name) for f in fields(settings_cls)}
    for f in fields(settings_cls):
        given = getattr(args, f.name, None)
        if given is not None:
            values[f.name] = value_of(given, hints[f.name], f, flag, f.name)
    return settings_cls(**values)


def _plain(tp):
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    return args[0] if typing.get_origin(tp) in (typing.Union, types.UnionType) else tp
